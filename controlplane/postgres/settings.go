package postgres

import (
	"context"
	"fmt"

	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// GetSetting returns the value of key or ErrNotFound.
func (db *DB) GetSetting(ctx context.Context, key string) (string, error) {
	var v string
	if err := db.pool.QueryRow(ctx, `SELECT value FROM settings WHERE key = $1`, key).Scan(&v); err != nil {
		return "", fmt.Errorf("setting %q: %w", key, mapErr(err))
	}
	return v, nil
}

// PutSetting creates or replaces key.
func (db *DB) PutSetting(ctx context.Context, key, value string) error {
	if err := storeutil.CheckSettingKey(key); err != nil {
		return err
	}
	_, err := db.pool.Exec(ctx, `INSERT INTO settings (key, value, updated_at) VALUES ($1, $2, $3)
		ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at`,
		key, value, db.now())
	if err != nil {
		return fmt.Errorf("put setting %q: %w", key, mapErr(err))
	}
	return nil
}

// DeleteSetting removes key (a missing key is not an error).
func (db *DB) DeleteSetting(ctx context.Context, key string) error {
	if _, err := db.pool.Exec(ctx, `DELETE FROM settings WHERE key = $1`, key); err != nil {
		return fmt.Errorf("delete setting %q: %w", key, mapErr(err))
	}
	return nil
}
