package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
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

// ReleaseLease gives the lease up if holder has it.
func (db *DB) ReleaseLease(ctx context.Context, name, holder string) error {
	_, err := db.pool.Exec(ctx, `DELETE FROM leases WHERE name = $1 AND holder = $2`, name, holder)
	if err != nil {
		return fmt.Errorf("lease %s: %w", name, mapErr(err))
	}
	return nil
}

// GetTaskSchedule returns the scheduler's state of a task (ErrNotFound when
// it never failed a cycle).
func (db *DB) GetTaskSchedule(ctx context.Context, taskID int64) (*controlplane.TaskSchedule, error) {
	var s controlplane.TaskSchedule
	var why []byte
	err := db.pool.QueryRow(ctx, `SELECT task_id, attempts, next_attempt_at, why, why_at, preemptions, final, updated_at
		FROM task_schedule WHERE task_id = $1`, taskID).Scan(&s.TaskID, &s.Attempts, &s.NextAttemptAt, &why,
		&s.WhyAt, &s.Preemptions, &s.Final, &s.UpdatedAt)
	if err != nil {
		return nil, fmt.Errorf("task %d schedule: %w", taskID, mapErr(err))
	}
	s.NextAttemptAt, s.UpdatedAt, s.WhyAt = utc(s.NextAttemptAt), utc(s.UpdatedAt), utcPtr(s.WhyAt)
	if len(why) > 0 {
		s.Why = why
	}
	return &s, nil
}

// PutTaskSchedule upserts the scheduler's state of a task.
func (db *DB) PutTaskSchedule(ctx context.Context, s *controlplane.TaskSchedule) error {
	s.UpdatedAt = db.now()
	_, err := db.pool.Exec(ctx, `INSERT INTO task_schedule (task_id, attempts, next_attempt_at, why, why_at,
		preemptions, final, updated_at) VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7, $8) ON CONFLICT (task_id) DO UPDATE SET
		attempts = excluded.attempts, next_attempt_at = excluded.next_attempt_at, why = excluded.why,
		why_at = excluded.why_at, preemptions = excluded.preemptions, final = excluded.final, updated_at = excluded.updated_at`,
		s.TaskID, s.Attempts, storeutil.Trunc(s.NextAttemptAt), storeutil.OptionalJSON(s.Why),
		storeutil.TruncPtr(s.WhyAt), s.Preemptions, s.Final, s.UpdatedAt)
	if err != nil {
		return fmt.Errorf("task %d schedule: %w", s.TaskID, mapErr(err))
	}
	return nil
}
