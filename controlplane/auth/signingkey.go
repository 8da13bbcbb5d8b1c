package auth

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/heteroflow/heteroflow/controlplane"
)

// SigningKeySetting is the settings key holding the JWT key, so that every
// server sharing a PostgreSQL database signs and verifies with the same key
// and tokens survive restarts.
const SigningKeySetting = "auth.jwt_signing_key"

// LoadOrCreateSigningKey returns the stored JWT signing key, creating a
// random 256-bit key on first start. It re-reads after writing so that two
// servers starting together settle on whichever write landed last.
func LoadOrCreateSigningKey(ctx context.Context, store controlplane.Store) ([]byte, error) {
	v, err := store.GetSetting(ctx, SigningKeySetting)
	if err == nil {
		return decodeKey(v)
	}
	if !errors.Is(err, controlplane.ErrNotFound) {
		return nil, fmt.Errorf("read signing key: %w", err)
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("read random: %w", err)
	}
	if err := store.PutSetting(ctx, SigningKeySetting, base64.StdEncoding.EncodeToString(b)); err != nil {
		return nil, fmt.Errorf("store signing key: %w", err)
	}
	if v, err = store.GetSetting(ctx, SigningKeySetting); err != nil {
		return nil, fmt.Errorf("re-read signing key: %w", err)
	}
	return decodeKey(v)
}

func decodeKey(v string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil || len(b) < 32 {
		return nil, fmt.Errorf("stored %s is not a base64 key of ≥ 32 bytes", SigningKeySetting)
	}
	return b, nil
}

// LoadOrCreateSigningKeyFile returns the JWT signing key kept in the file at
// path (mode 0600), outside the database, so a copy of the database (a
// backup, a replica, a stolen file) cannot mint tokens. A key found in the
// database (SigningKeySetting, where earlier versions kept it) is moved to
// the file and deleted from the database; otherwise a random 256-bit key is
// created. Servers sharing one PostgreSQL database must share this file
// (copy it, or point every server at the same path).
func LoadOrCreateSigningKeyFile(ctx context.Context, store controlplane.Store, path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		key, err := decodeKey(strings.TrimSpace(string(b)))
		if err != nil {
			return nil, fmt.Errorf("signing key file %s: %w", path, err)
		}
		if err := os.Chmod(path, 0o600); err != nil {
			return nil, fmt.Errorf("signing key file %s: %w", path, err)
		}
		// A database copy of the key (left by an interrupted move) goes.
		if err := store.DeleteSetting(ctx, SigningKeySetting); err != nil {
			return nil, fmt.Errorf("remove signing key from the database: %w", err)
		}
		return key, nil
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("read signing key file: %w", err)
	}
	var key []byte
	v, err := store.GetSetting(ctx, SigningKeySetting)
	switch {
	case err == nil:
		if key, err = decodeKey(v); err != nil {
			return nil, err
		}
	case errors.Is(err, controlplane.ErrNotFound):
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, fmt.Errorf("read random: %w", err)
		}
	default:
		return nil, fmt.Errorf("read signing key: %w", err)
	}
	if err := writeKeyFile(path, key); err != nil {
		return nil, err
	}
	if err := store.DeleteSetting(ctx, SigningKeySetting); err != nil {
		return nil, fmt.Errorf("remove signing key from the database: %w", err)
	}
	return key, nil
}

// writeKeyFile writes key to path with mode 0600 atomically (a temporary
// file in the same directory, then rename), creating the directory 0700.
func writeKeyFile(path string, key []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("signing key directory: %w", err)
	}
	f, err := os.CreateTemp(dir, ".jwt-key-*")
	if err != nil {
		return fmt.Errorf("write signing key: %w", err)
	}
	defer os.Remove(f.Name())
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return fmt.Errorf("write signing key: %w", err)
	}
	if _, err := f.WriteString(base64.StdEncoding.EncodeToString(key) + "\n"); err != nil {
		f.Close()
		return fmt.Errorf("write signing key: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("write signing key: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write signing key: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("write signing key: %w", err)
	}
	return nil
}
