package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// AcquireLease takes the lease when it is free, expired or already held by
// holder, in one statement (the writer connection serialises it anyway).
func (db *DB) AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (bool, error) {
	if err := storeutil.CheckLease(name, holder, ttl); err != nil {
		return false, err
	}
	now := db.now()
	ok := false
	err := db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO leases (name, holder, expires_at) VALUES (?, ?, ?)
			ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
			WHERE leases.holder = excluded.holder OR leases.expires_at < ?`, name, holder, ts(now.Add(ttl)), ts(now))
		if err != nil {
			return fmt.Errorf("lease %s: %w", name, mapErr(err))
		}
		n, err := res.RowsAffected()
		ok = n > 0
		return mapErr(err)
	})
	return ok, err
}
