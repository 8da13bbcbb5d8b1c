package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// acquireLeaseSQL takes the lease when it is free, expired or already held
// by the caller, in one statement. INSERT … ON CONFLICT DO UPDATE locks the
// existing row and evaluates the WHERE on its latest committed version, so
// among servers racing for an expired lease exactly one updates it; the
// others see the winner's fresh expiry and update nothing. $3 is the
// injected clock, or NULL for the database's clock_timestamp(): with
// several servers on one database that is the only clock they all share, so
// a skewed host cannot steal a live lease.
const acquireLeaseSQL = `INSERT INTO leases (name, holder, expires_at)
	VALUES ($1, $2, COALESCE($3::timestamptz, clock_timestamp()) + $4::bigint * interval '1 microsecond')
	ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
	WHERE leases.holder = excluded.holder OR leases.expires_at < COALESCE($3::timestamptz, clock_timestamp())`

// AcquireLease: see controlplane.SchedulingStore.
func (db *DB) AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (bool, error) {
	if err := storeutil.CheckLease(name, holder, ttl); err != nil {
		return false, err
	}
	var now *time.Time
	if !db.dbClock {
		t := db.now()
		now = &t
	}
	tag, err := db.pool.Exec(ctx, acquireLeaseSQL, name, holder, now, ttl.Microseconds())
	if err != nil {
		return false, fmt.Errorf("lease %s: %w", name, mapErr(err))
	}
	return tag.RowsAffected() > 0, nil
}
