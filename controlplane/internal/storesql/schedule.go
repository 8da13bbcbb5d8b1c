package storesql

import (
	"context"
	"fmt"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// Lease release and the scheduler's per-task state. Taking a lease stays in
// each store: PostgreSQL compares expiries with the database's own clock.

// ReleaseLease gives the lease up if holder has it.
func (q Queries) ReleaseLease(ctx context.Context, name, holder string) error {
	return q.db.Write(ctx, func(c Conn) error {
		if _, err := c.Exec(ctx, `DELETE FROM leases WHERE name = $1 AND holder = $2`, name, holder); err != nil {
			return fmt.Errorf("lease %s: %w", name, err)
		}
		return nil
	})
}

// GetTaskSchedule returns the scheduler's state of a task (ErrNotFound when
// it never failed a cycle).
func (q Queries) GetTaskSchedule(ctx context.Context, taskID int64) (*controlplane.TaskSchedule, error) {
	var s controlplane.TaskSchedule
	var why []byte
	d := q.db
	err := d.Reader().QueryRow(ctx, `SELECT task_id, attempts, next_attempt_at, why, why_at, preemptions, final, updated_at
		FROM task_schedule WHERE task_id = $1`, taskID).Scan(&s.TaskID, &s.Attempts, d.ScanTime(&s.NextAttemptAt), &why,
		d.ScanNullTime(&s.WhyAt), &s.Preemptions, &s.Final, d.ScanTime(&s.UpdatedAt))
	if err != nil {
		return nil, fmt.Errorf("task %d schedule: %w", taskID, err)
	}
	if len(why) > 0 {
		s.Why = why
	}
	return &s, nil
}

// PutTaskSchedule upserts the scheduler's state of a task.
func (q Queries) PutTaskSchedule(ctx context.Context, s *controlplane.TaskSchedule) error {
	s.UpdatedAt = q.db.Now()
	d := q.db
	return d.Write(ctx, func(c Conn) error {
		_, err := c.Exec(ctx, `INSERT INTO task_schedule (task_id, attempts, next_attempt_at, why, why_at,
			preemptions, final, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (task_id) DO UPDATE SET
			attempts = excluded.attempts, next_attempt_at = excluded.next_attempt_at, why = excluded.why,
			why_at = excluded.why_at, preemptions = excluded.preemptions, final = excluded.final, updated_at = excluded.updated_at`,
			s.TaskID, s.Attempts, d.Time(storeutil.Trunc(s.NextAttemptAt)), storeutil.OptionalJSON(s.Why),
			d.NullTime(storeutil.TruncPtr(s.WhyAt)), s.Preemptions, s.Final, d.Time(s.UpdatedAt))
		if err != nil {
			return fmt.Errorf("task %d schedule: %w", s.TaskID, err)
		}
		return nil
	})
}
