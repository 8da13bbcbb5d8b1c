package oidcauth

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
)

// sealer encrypts and authenticates cookie values (AES-256-GCM).
type sealer struct{ aead cipher.AEAD }

// newSealer derives the cookie key from the server's signing key, with a
// label so the derived key serves nothing else.
func newSealer(signingKey []byte) (*sealer, error) {
	if len(signingKey) < 32 {
		return nil, errors.New("oidc: the signing key is shorter than 32 bytes")
	}
	k := sha256.Sum256(append([]byte("heteroflow oidc cookie\x00"), signingKey...))
	block, err := aes.NewCipher(k[:])
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &sealer{aead: aead}, nil
}

// seal encrypts v (JSON) bound to purpose, so a cookie of one kind is never
// accepted as the other.
func (s *sealer) seal(purpose string, v any) (string, error) {
	plain, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	out := s.aead.Seal(nonce, nonce, plain, []byte(purpose))
	return base64.RawURLEncoding.EncodeToString(out), nil
}

func (s *sealer) open(purpose, value string, v any) error {
	raw, err := base64.RawURLEncoding.DecodeString(value)
	if err != nil || len(raw) < s.aead.NonceSize() {
		return errors.New("malformed cookie")
	}
	n := s.aead.NonceSize()
	plain, err := s.aead.Open(nil, raw[:n], raw[n:], []byte(purpose))
	if err != nil {
		return errors.New("cookie does not verify")
	}
	if err := json.Unmarshal(plain, v); err != nil {
		return fmt.Errorf("cookie content: %w", err)
	}
	return nil
}
