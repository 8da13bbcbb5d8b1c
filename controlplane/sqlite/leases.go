package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
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

// ReleaseLease expires the lease if holder has it.
func (db *DB) ReleaseLease(ctx context.Context, name, holder string) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM leases WHERE name = ? AND holder = ?`, name, holder)
		return mapErr(err)
	})
}

// GetTaskSchedule returns the scheduler's state of a task (ErrNotFound when
// it never failed a cycle).
func (db *DB) GetTaskSchedule(ctx context.Context, taskID int64) (*controlplane.TaskSchedule, error) {
	var s controlplane.TaskSchedule
	var next, updated int64
	var why []byte
	var whyAt sql.NullInt64
	err := db.r.QueryRowContext(ctx, `SELECT task_id, attempts, next_attempt_at, why, why_at, preemptions, final, updated_at
		FROM task_schedule WHERE task_id = ?`, taskID).Scan(&s.TaskID, &s.Attempts, &next, &why, &whyAt, &s.Preemptions, &s.Final, &updated)
	if err != nil {
		return nil, fmt.Errorf("task %d schedule: %w", taskID, mapErr(err))
	}
	s.NextAttemptAt, s.UpdatedAt, s.WhyAt = fromTS(next), fromTS(updated), fromNullTS(whyAt)
	if len(why) > 0 {
		s.Why = why
	}
	return &s, nil
}

// PutTaskSchedule upserts the scheduler's state of a task.
func (db *DB) PutTaskSchedule(ctx context.Context, s *controlplane.TaskSchedule) error {
	s.UpdatedAt = db.now()
	var why any
	if len(s.Why) > 0 {
		why = string(s.Why)
	}
	return db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO task_schedule (task_id, attempts, next_attempt_at, why, why_at,
			preemptions, final, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (task_id) DO UPDATE SET
			attempts = excluded.attempts, next_attempt_at = excluded.next_attempt_at, why = excluded.why,
			why_at = excluded.why_at, preemptions = excluded.preemptions, final = excluded.final, updated_at = excluded.updated_at`,
			s.TaskID, s.Attempts, ts(s.NextAttemptAt), why, tsPtr(s.WhyAt), s.Preemptions, s.Final, ts(s.UpdatedAt))
		if err != nil {
			return fmt.Errorf("task %d schedule: %w", s.TaskID, mapErr(err))
		}
		return nil
	})
}
