package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
)

// randomToken returns n random bytes, base64url encoded.
func randomToken(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("read random: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// HashSecret is the at-rest form of refresh tokens and API-key secrets:
// hex SHA-256. The inputs carry 256 bits of entropy, so brute force of the
// hash is hopeless and a slow KDF would only cost every request.
func HashSecret(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// secretMatches compares a presented secret with a stored hash in constant time.
func secretMatches(secret, hash string) bool {
	return subtle.ConstantTimeCompare([]byte(HashSecret(secret)), []byte(hash)) == 1
}

// NewRefreshToken returns an opaque refresh token and its hash.
func NewRefreshToken() (token, hash string, err error) {
	token, err = randomToken(32)
	if err != nil {
		return "", "", err
	}
	return token, HashSecret(token), nil
}

// APIKeyPrefix is the literal start of every API key.
const APIKeyPrefix = "hf_"

// NewAPIKey returns a key "hf_<prefix>_<secret>", its prefix (stored in clear
// to find the row and to show in lists) and the secret's hash.
func NewAPIKey() (key, prefix, secretHash string, err error) {
	// 6 bytes → 8 base64url characters; hex keeps '_' out of the prefix so
	// the key splits unambiguously.
	p := make([]byte, 6)
	if _, err := rand.Read(p); err != nil {
		return "", "", "", fmt.Errorf("read random: %w", err)
	}
	prefix = hex.EncodeToString(p)
	secret, err := randomToken(32)
	if err != nil {
		return "", "", "", err
	}
	return APIKeyPrefix + prefix + "_" + secret, prefix, HashSecret(secret), nil
}

// ParseAPIKey splits "hf_<prefix>_<secret>"; ok is false for anything else.
func ParseAPIKey(key string) (prefix, secret string, ok bool) {
	rest, found := strings.CutPrefix(key, APIKeyPrefix)
	if !found {
		return "", "", false
	}
	prefix, secret, found = strings.Cut(rest, "_")
	if !found || len(prefix) != 12 || secret == "" {
		return "", "", false
	}
	return prefix, secret, true
}

// LooksLikeAPIKey tells API keys and JWTs apart in an Authorization header.
func LooksLikeAPIKey(s string) bool { return strings.HasPrefix(s, APIKeyPrefix) }
