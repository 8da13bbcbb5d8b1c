package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storesql"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// scanTask reads one row of storesql.TaskCols from a driver row, mapping
// its error.
func scanTask(row pgx.Row) (*controlplane.Task, error) {
	return storesql.ScanTask(shared{}, pgRow{row})
}

// scanTaskState reads one row of storesql.TaskStateCols (no spec).
func scanTaskState(row pgx.Row) (*controlplane.Task, error) {
	return storesql.ScanTaskState(shared{}, pgRow{row})
}

// transitionSQL is the guarded update and the event insert in one statement.
// The row changes only if the task is still in the expected state (and, for a
// retry, has retries left); under READ COMMITTED a racing update waits for the
// row lock and then re-checks the guard, so exactly one racer wins. Moving to
// queued starts a fresh attempt, so placement and run results are cleared.
const transitionSQL = transitionHead + storesql.TaskCols + transitionTail

// transitionStateSQL returns only the columns a transition changes: the
// scheduler's batches take the spec from the store's spec cache
// (storesql.FillSpecs) instead of decoding it again.
const transitionStateSQL = transitionHead + storesql.TaskStateCols + transitionTail

const transitionHead = `WITH u AS (
	UPDATE tasks SET state = $1::text, reason = $2, updated_at = $3, attempt = attempt + $4::int,
		node_id = COALESCE($5::text, CASE WHEN $1::text = 'queued' THEN '' ELSE node_id END),
		exit_code = CASE WHEN $6::int IS NOT NULL THEN $6::int WHEN $1::text = 'queued' THEN NULL ELSE exit_code END,
		started_at = CASE WHEN $1::text = 'running' THEN $3 WHEN $1::text = 'queued' THEN NULL ELSE started_at END,
		finished_at = CASE WHEN $7::bool THEN $3 WHEN $1::text = 'queued' THEN NULL ELSE finished_at END
	WHERE id = $8 AND state = $9::text AND ($4::int = 0 OR attempt < max_retries)
	RETURNING `

// transitionTail writes the events: From → To, or with a Via state
// ($11, reason $12) From → Via then Via → To, in that order (event IDs
// order a task's history).
const transitionTail = `
), e AS (
	INSERT INTO task_events (task_id, from_state, to_state, reason, actor, at)
	SELECT u.id, v.from_state, v.to_state, v.reason, $10, $3
	FROM u CROSS JOIN (VALUES (1, $9::text, $11::text, $12::text),
		(2, COALESCE(NULLIF($11::text, ''), $9::text), $1::text, $2::text)) v(n, from_state, to_state, reason)
	WHERE v.to_state <> '' ORDER BY v.n
)
SELECT * FROM u`

// transitionArgs are the parameters of transitionSQL and
// transitionStateSQL for tr at now.
func transitionArgs(tr controlplane.Transition, now time.Time) []any {
	inc := 0
	if tr.Retry {
		inc = 1
	}
	return []any{tr.To, tr.Reason, now, inc, tr.NodeID, tr.ExitCode, tr.To.Terminal(), tr.TaskID, tr.From, tr.Actor,
		tr.Via, tr.ViaReason}
}

// TransitionTask applies tr atomically (row update + event). ErrConflict when
// the move is not in the transition table, the task is no longer in tr.From,
// or a retry has none left; ErrNotFound for a missing task.
func (db *DB) TransitionTask(ctx context.Context, tr controlplane.Transition) (*controlplane.Task, error) {
	if err := storeutil.CheckTransition(tr); err != nil {
		return nil, err
	}
	t, err := scanTask(db.pool.QueryRow(ctx, transitionSQL, transitionArgs(tr, db.now())...))
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
