package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// GetSetting returns the value of key or ErrNotFound.
func (db *DB) GetSetting(ctx context.Context, key string) (string, error) {
	var v string
	if err := db.r.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, key).Scan(&v); err != nil {
		return "", fmt.Errorf("setting %q: %w", key, mapErr(err))
	}
	return v, nil
}

// PutSetting creates or replaces key.
func (db *DB) PutSetting(ctx context.Context, key, value string) error {
	if err := storeutil.CheckSettingKey(key); err != nil {
		return err
	}
	return db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
			key, value, ts(db.now()))
		if err != nil {
			return fmt.Errorf("put setting %q: %w", key, mapErr(err))
		}
		return nil
	})
}

// DeleteSetting removes key (a missing key is not an error).
func (db *DB) DeleteSetting(ctx context.Context, key string) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM settings WHERE key = ?`, key); err != nil {
			return fmt.Errorf("delete setting %q: %w", key, mapErr(err))
		}
		return nil
	})
}
