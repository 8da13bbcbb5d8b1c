package server

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/pki"
)

// Settings that hold the secrets HA servers share. Values are sealed with
// AES-256-GCM under the HA secret key (the setting's name is the
// additional data, so a value copied under another name does not open).
const (
	SharedSigningKeySetting = "ha.jwt_signing_key"
	SharedCACertSetting     = "ha.agent_ca_cert" // public, stored sealed all the same
	SharedCAKeySetting      = "ha.agent_ca_key"
	sealedPrefix            = "sealed-v1:"
	// secretsLease serialises the first servers' start: whoever holds it
	// reads the shared secrets and creates the missing ones.
	secretsLease = "ha.secrets"
)

// errWrongSecretKey is the message for a sealed value that does not open:
// this server's key differs from the one that sealed it.
var errWrongSecretKey = errors.New("a shared secret in the database does not open with this server's HA secret key: every server must use the same ha.secret_key_file / " +
	"数据库中的共享密钥无法用本服务器的高可用密钥解开：所有服务器必须使用同一个 ha.secret_key_file")

type leaser interface {
	AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (bool, error)
	ReleaseLease(ctx context.Context, name, holder string) error
}

// Sealer seals values kept in the database with AES-256-GCM; the name a
// value is sealed under is its additional data, so a value copied under
// another name does not open.
type Sealer struct {
	aead cipher.AEAD
}

// NewSealer returns a Sealer under a 32-byte key.
func NewSealer(key []byte) (*Sealer, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("secret key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secret key: %w", err)
	}
	return &Sealer{aead: aead}, nil
}

// Seal returns plain sealed under name.
func (s *Sealer) Seal(name string, plain []byte) string {
	nonce := make([]byte, s.aead.NonceSize())
	_, _ = rand.Read(nonce) // crypto/rand never fails on supported platforms
	return sealedPrefix + base64.StdEncoding.EncodeToString(s.aead.Seal(nonce, nonce, plain, []byte(name)))
}

// Open returns the value Seal sealed under name; another key or name fails.
func (s *Sealer) Open(name, v string) ([]byte, error) {
	raw, ok := strings.CutPrefix(v, sealedPrefix)
	if !ok {
		return nil, fmt.Errorf("setting %s is not sealed", name)
	}
	b, err := base64.StdEncoding.DecodeString(raw)
	if err != nil || len(b) < s.aead.NonceSize() {
		return nil, fmt.Errorf("setting %s is damaged", name)
	}
	plain, err := s.aead.Open(nil, b[:s.aead.NonceSize()], b[s.aead.NonceSize():], []byte(name))
	if err != nil {
		return nil, fmt.Errorf("setting %s: %w", name, errWrongSecretKey)
	}
	return plain, nil
}

// sharedSecrets reads and creates the sealed settings.
type sharedSecrets struct {
	store controlplane.Store
	*Sealer
}

func newSharedSecrets(store controlplane.Store, key []byte) (*sharedSecrets, error) {
	sl, err := NewSealer(key)
	if err != nil {
		return nil, fmt.Errorf("ha %w", err)
	}
	return &sharedSecrets{store: store, Sealer: sl}, nil
}

// loadOrCreate returns the secrets named, creating the missing ones with
// create (all together: a CA's certificate and key belong to one another)
// under the secrets lease, so that servers starting together settle on
// one value. holder names this server.
func (s *sharedSecrets) loadOrCreate(ctx context.Context, holder string, names []string, create func() ([][]byte, error)) ([][]byte, error) {
	l, ok := s.store.(leaser)
	if !ok {
		return nil, fmt.Errorf("the %T store has no leases (HA needs PostgreSQL)", s.store)
	}
	if err := acquireWait(ctx, l, holder); err != nil {
		return nil, err
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = l.ReleaseLease(rctx, secretsLease, holder)
	}()
	out := make([][]byte, len(names))
	missing := 0
	for i, n := range names {
		v, err := s.store.GetSetting(ctx, n)
		switch {
		case errors.Is(err, controlplane.ErrNotFound):
			missing++
			continue
		case err != nil:
			return nil, fmt.Errorf("read %s: %w", n, err)
		}
		if out[i], err = s.Open(n, v); err != nil {
			return nil, err
		}
	}
	if missing == 0 {
		return out, nil
	}
	if missing != len(names) {
		return nil, fmt.Errorf("shared secrets %v are only partly in the database: restore them from a backup or delete them all to start over", names)
	}
	vals, err := create()
	if err != nil {
		return nil, err
	}
	for i, n := range names {
		if err := s.store.PutSetting(ctx, n, s.Seal(n, vals[i])); err != nil {
			return nil, fmt.Errorf("store %s: %w", n, err)
		}
	}
	return vals, nil
}

// acquireWait takes the secrets lease, waiting for another starting
// server to finish with it (it holds it for a few statements).
func acquireWait(ctx context.Context, l leaser, holder string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		ok, err := l.AcquireLease(ctx, secretsLease, holder, 15*time.Second)
		if err != nil {
			return fmt.Errorf("shared secrets lock: %w", err)
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("shared secrets lock: another server holds it: %w", ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// sharedSigningKey returns the JWT signing key every HA server uses,
// creating a random 256-bit key on the first server's start.
func (s *sharedSecrets) sharedSigningKey(ctx context.Context, holder string) ([]byte, error) {
	v, err := s.loadOrCreate(ctx, holder, []string{SharedSigningKeySetting}, func() ([][]byte, error) {
		k := make([]byte, 32)
		if _, err := rand.Read(k); err != nil {
			return nil, fmt.Errorf("read random: %w", err)
		}
		return [][]byte{k}, nil
	})
	if err != nil {
		return nil, err
	}
	if len(v[0]) < 32 {
		return nil, fmt.Errorf("shared signing key is shorter than 32 bytes")
	}
	return v[0], nil
}

// sharedCA returns the agent CA every HA server signs with, generating
// one on the first server's start (an operator-provided CA is read from
// its files instead, by loadCA).
func (s *sharedSecrets) sharedCA(ctx context.Context, holder string) (*pki.CA, error) {
	v, err := s.loadOrCreate(ctx, holder, []string{SharedCACertSetting, SharedCAKeySetting}, func() ([][]byte, error) {
		ca, keyPEM, err := pki.Generate()
		if err != nil {
			return nil, err
		}
		return [][]byte{ca.CertPEM, keyPEM}, nil
	})
	if err != nil {
		return nil, err
	}
	return pki.Parse(v[0], v[1])
}
