package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

const taskCols = `id, name, command, image, args, env, device_count, memory_mib, compute_percent, vendor,
	models, qos, priority, timeout_seconds, max_retries, labels, tenant, project, cpu_milli,
	host_memory_mib, rdma, gang, gang_size, state, COALESCE(owner_id, 0), owner, attempt, node_id,
	exit_code, reason, created_at, updated_at, started_at, finished_at, secret_env`

func scanTask(row interface{ Scan(...any) error }) (*controlplane.Task, error) {
	var t controlplane.Task
	s := &t.Spec
	var command, args, env, models, labels, secretEnv []byte
	var exit sql.NullInt64
	var created, updated int64
	var started, finished sql.NullInt64
	if err := row.Scan(&t.ID, &s.Name, &command, &s.Image, &args, &env, &s.DeviceCount, &s.MemoryMiB,
		&s.ComputePercent, &s.Vendor, &models, &s.QoS, &s.Priority, &s.TimeoutSeconds, &s.MaxRetries,
		&labels, &s.Tenant, &s.Project, &s.CPUMilli, &s.HostMemoryMiB, &s.RDMA, &s.Gang, &s.GangSize,
		&t.State, &t.OwnerID, &t.Owner, &t.Attempt, &t.NodeID, &exit, &t.Reason, &created, &updated,
		&started, &finished, &secretEnv); err != nil {
		return nil, mapErr(err)
	}
	if err := storeutil.DecodeSpec(s, command, args, env, models, labels); err != nil {
		return nil, fmt.Errorf("task %d: %w", t.ID, err)
	}
	if err := storeutil.DecodeSecretEnv(s, secretEnv); err != nil {
		return nil, fmt.Errorf("task %d: %w", t.ID, err)
	}
	if exit.Valid {
		v := int(exit.Int64)
		t.ExitCode = &v
	}
	t.CreatedAt, t.UpdatedAt = fromTS(created), fromTS(updated)
	t.StartedAt, t.FinishedAt = fromNullTS(started), fromNullTS(finished)
	return &t, nil
}

// GetTask returns the task with id or ErrNotFound.
func (db *DB) GetTask(ctx context.Context, id int64) (*controlplane.Task, error) {
	t, err := scanTask(db.r.QueryRowContext(ctx, `SELECT `+taskCols+` FROM tasks WHERE id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("task %d: %w", id, err)
	}
	return t, nil
}

// transitionSQL is one guarded update: it changes the row only if the task is
// still in the expected state (and, for a retry, has retries left). Moving to
// queued starts a fresh attempt, so placement and run results are cleared.
const transitionSQL = `UPDATE tasks SET state = ?1, reason = ?2, updated_at = ?3, attempt = attempt + ?4,
	node_id = COALESCE(?5, CASE WHEN ?1 = 'queued' THEN '' ELSE node_id END),
	exit_code = CASE WHEN ?6 IS NOT NULL THEN ?6 WHEN ?1 = 'queued' THEN NULL ELSE exit_code END,
	started_at = CASE WHEN ?1 = 'running' THEN ?3 WHEN ?1 = 'queued' THEN NULL ELSE started_at END,
	finished_at = CASE WHEN ?7 THEN ?3 WHEN ?1 = 'queued' THEN NULL ELSE finished_at END
	WHERE id = ?8 AND state = ?9 AND (?4 = 0 OR attempt < max_retries)
	RETURNING ` + taskCols

// TransitionTask applies tr (guarded row update + event) in one transaction.
// ErrConflict when the move is not in the transition table, the task is no
// longer in tr.From, or a retry has none left; ErrNotFound for a missing task.
func (db *DB) TransitionTask(ctx context.Context, tr controlplane.Transition) (*controlplane.Task, error) {
	if err := storeutil.CheckTransition(tr); err != nil {
		return nil, err
	}
	now := db.now()
	inc := 0
	if tr.Retry {
		inc = 1
	}
	var exit any
	if tr.ExitCode != nil {
		exit = *tr.ExitCode
	}
	var node any
	if tr.NodeID != nil {
		node = *tr.NodeID
	}
	var out *controlplane.Task
	err := db.write(ctx, func(tx *sql.Tx) error {
		t, err := scanTask(tx.QueryRowContext(ctx, transitionSQL, tr.To, tr.Reason, ts(now), inc, node, exit,
			tr.To.Terminal(), tr.TaskID, tr.From))
		if errors.Is(err, controlplane.ErrNotFound) {
			return db.transitionGuardError(ctx, tx, tr)
		}
		if err != nil {
			return fmt.Errorf("transition task %d: %w", tr.TaskID, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO task_events (task_id, from_state, to_state, reason,
			actor, at) VALUES (?, ?, ?, ?, ?, ?)`, tr.TaskID, tr.From, tr.To, tr.Reason, tr.Actor, ts(now)); err != nil {
			return fmt.Errorf("transition task %d event: %w", tr.TaskID, mapErr(err))
		}
		out = t
		return nil
	})
	return out, err
}

func (db *DB) transitionGuardError(ctx context.Context, tx *sql.Tx, tr controlplane.Transition) error {
	var state controlplane.TaskState
	var attempt, maxRetries int
	err := tx.QueryRowContext(ctx, `SELECT state, attempt, max_retries FROM tasks WHERE id = ?`, tr.TaskID).
		Scan(&state, &attempt, &maxRetries)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("transition task %d: %w", tr.TaskID, mapErr(err))
	}
	return storeutil.GuardError(tr, err == nil, state, attempt, maxRetries)
}

// ListTaskEvents returns the task's events oldest first; ErrNotFound when the
// task does not exist.
func (db *DB) ListTaskEvents(ctx context.Context, taskID int64) ([]*controlplane.TaskEvent, error) {
	var out []*controlplane.TaskEvent
	err := db.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT id, task_id, from_state, to_state, reason, actor, at
			FROM task_events WHERE task_id = ? ORDER BY id`, taskID)
		if err != nil {
			return mapErr(err)
		}
		defer rows.Close()
		for rows.Next() {
			var e controlplane.TaskEvent
			var at int64
			if err := rows.Scan(&e.ID, &e.TaskID, &e.From, &e.To, &e.Reason, &e.Actor, &at); err != nil {
				return mapErr(err)
			}
			e.At = fromTS(at)
			out = append(out, &e)
		}
		if err := rows.Err(); err != nil {
			return mapErr(err)
		}
		if len(out) == 0 {
			var one int
			return mapErr(tx.QueryRowContext(ctx, `SELECT 1 FROM tasks WHERE id = ?`, taskID).Scan(&one))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("events of task %d: %w", taskID, err)
	}
	return out, nil
}
