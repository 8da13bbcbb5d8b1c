package auth

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"

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
