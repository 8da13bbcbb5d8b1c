package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

const taskCols = `id, name, command, image, args, env, device_count, memory_mib, compute_percent, vendor,
	models, qos, priority, timeout_seconds, max_retries, labels, tenant, project, cpu_milli,
	host_memory_mib, rdma, gang, gang_size, state, COALESCE(owner_id, 0), owner, attempt, node_id,
	exit_code, reason, created_at, updated_at, started_at, finished_at, secret_env`

func scanTask(row pgx.Row) (*controlplane.Task, error) {
	var t controlplane.Task
	s := &t.Spec
	var command, args, env, models, labels, secretEnv []byte
	if err := row.Scan(&t.ID, &s.Name, &command, &s.Image, &args, &env, &s.DeviceCount, &s.MemoryMiB,
		&s.ComputePercent, &s.Vendor, &models, &s.QoS, &s.Priority, &s.TimeoutSeconds, &s.MaxRetries,
		&labels, &s.Tenant, &s.Project, &s.CPUMilli, &s.HostMemoryMiB, &s.RDMA, &s.Gang, &s.GangSize,
		&t.State, &t.OwnerID, &t.Owner, &t.Attempt, &t.NodeID, &t.ExitCode, &t.Reason, &t.CreatedAt,
		&t.UpdatedAt, &t.StartedAt, &t.FinishedAt, &secretEnv); err != nil {
		return nil, mapErr(err)
	}
	if err := storeutil.DecodeSpec(s, command, args, env, models, labels); err != nil {
		return nil, fmt.Errorf("task %d: %w", t.ID, err)
	}
	if err := storeutil.DecodeSecretEnv(s, secretEnv); err != nil {
		return nil, fmt.Errorf("task %d: %w", t.ID, err)
	}
	t.CreatedAt, t.UpdatedAt = utc(t.CreatedAt), utc(t.UpdatedAt)
	t.StartedAt, t.FinishedAt = utcPtr(t.StartedAt), utcPtr(t.FinishedAt)
	return &t, nil
}

// GetTask returns the task with id or ErrNotFound.
func (db *DB) GetTask(ctx context.Context, id int64) (*controlplane.Task, error) {
	t, err := scanTask(db.pool.QueryRow(ctx, `SELECT `+taskCols+` FROM tasks WHERE id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("task %d: %w", id, err)
	}
	return t, nil
}

// transitionSQL is the guarded update and the event insert in one statement.
// The row changes only if the task is still in the expected state (and, for a
// retry, has retries left); under READ COMMITTED a racing update waits for the
// row lock and then re-checks the guard, so exactly one racer wins. Moving to
// queued starts a fresh attempt, so placement and run results are cleared.
const transitionSQL = `WITH u AS (
	UPDATE tasks SET state = $1::text, reason = $2, updated_at = $3, attempt = attempt + $4::int,
		node_id = COALESCE($5::text, CASE WHEN $1::text = 'queued' THEN '' ELSE node_id END),
		exit_code = CASE WHEN $6::int IS NOT NULL THEN $6::int WHEN $1::text = 'queued' THEN NULL ELSE exit_code END,
		started_at = CASE WHEN $1::text = 'running' THEN $3 WHEN $1::text = 'queued' THEN NULL ELSE started_at END,
		finished_at = CASE WHEN $7::bool THEN $3 WHEN $1::text = 'queued' THEN NULL ELSE finished_at END
	WHERE id = $8 AND state = $9::text AND ($4::int = 0 OR attempt < max_retries)
	RETURNING ` + taskCols + `
), e AS (
	INSERT INTO task_events (task_id, from_state, to_state, reason, actor, at)
	SELECT id, $9::text, $1::text, $2, $10, $3 FROM u
)
SELECT * FROM u`

// TransitionTask applies tr atomically (row update + event). ErrConflict when
// the move is not in the transition table, the task is no longer in tr.From,
// or a retry has none left; ErrNotFound for a missing task.
func (db *DB) TransitionTask(ctx context.Context, tr controlplane.Transition) (*controlplane.Task, error) {
	if err := storeutil.CheckTransition(tr); err != nil {
		return nil, err
	}
	inc := 0
	if tr.Retry {
		inc = 1
	}
	t, err := scanTask(db.pool.QueryRow(ctx, transitionSQL, tr.To, tr.Reason, db.now(), inc, tr.NodeID,
		tr.ExitCode, tr.To.Terminal(), tr.TaskID, tr.From, tr.Actor))
	if errors.Is(err, controlplane.ErrNotFound) {
		return nil, db.transitionGuardError(ctx, tr)
	}
	if err != nil {
		return nil, fmt.Errorf("transition task %d: %w", tr.TaskID, err)
	}
	return t, nil
}

func (db *DB) transitionGuardError(ctx context.Context, tr controlplane.Transition) error {
	var state controlplane.TaskState
	var attempt, maxRetries int
	err := db.pool.QueryRow(ctx, `SELECT state, attempt, max_retries FROM tasks WHERE id = $1`, tr.TaskID).
		Scan(&state, &attempt, &maxRetries)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("transition task %d: %w", tr.TaskID, mapErr(err))
	}
	return storeutil.GuardError(tr, err == nil, state, attempt, maxRetries)
}

// ListTaskEvents returns the task's events oldest first; ErrNotFound when the
// task does not exist.
func (db *DB) ListTaskEvents(ctx context.Context, taskID int64) ([]*controlplane.TaskEvent, error) {
	rows, err := db.pool.Query(ctx, `SELECT id, task_id, from_state, to_state, reason, actor, at
		FROM task_events WHERE task_id = $1 ORDER BY id`, taskID)
	if err != nil {
		return nil, fmt.Errorf("events of task %d: %w", taskID, mapErr(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*controlplane.TaskEvent, error) {
		var e controlplane.TaskEvent
		err := r.Scan(&e.ID, &e.TaskID, &e.From, &e.To, &e.Reason, &e.Actor, &e.At)
		e.At = utc(e.At)
		return &e, err
	})
	if err != nil {
		return nil, fmt.Errorf("events of task %d: %w", taskID, mapErr(err))
	}
	if len(out) == 0 {
		// Retention may have removed a finished task's events: no events
		// is an empty history unless the task itself is missing.
		var one int
		if err := db.pool.QueryRow(ctx, `SELECT 1 FROM tasks WHERE id = $1`, taskID).Scan(&one); err != nil {
			return nil, fmt.Errorf("task %d: %w", taskID, mapErr(err))
		}
	}
	return out, nil
}
