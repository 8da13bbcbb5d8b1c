package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storesql"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// scanTask reads one row of storesql.TaskCols from a driver row, mapping
// its error.
func scanTask(row interface{ Scan(...any) error }) (*controlplane.Task, error) {
	return storesql.ScanTask(shared{}, mappedRow{row})
}

// mappedRow maps a driver row's Scan error for the shared scanners.
type mappedRow struct {
	r interface{ Scan(...any) error }
}

func (m mappedRow) Scan(dest ...any) error { return connErr(m.r.Scan(dest...)) }

// transitionSQL is one guarded update: it changes the row only if the task is
// still in the expected state (and, for a retry, has retries left). Moving to
// queued starts a fresh attempt, so placement and run results are cleared.
const transitionSQL = `UPDATE tasks SET state = ?1, reason = ?2, updated_at = ?3, attempt = attempt + ?4,
	node_id = COALESCE(?5, CASE WHEN ?1 = 'queued' THEN '' ELSE node_id END),
	exit_code = CASE WHEN ?6 IS NOT NULL THEN ?6 WHEN ?1 = 'queued' THEN NULL ELSE exit_code END,
	started_at = CASE WHEN ?1 = 'running' THEN ?3 WHEN ?1 = 'queued' THEN NULL ELSE started_at END,
	finished_at = CASE WHEN ?7 THEN ?3 WHEN ?1 = 'queued' THEN NULL ELSE finished_at END
	WHERE id = ?8 AND state = ?9 AND (?4 = 0 OR attempt < max_retries)
	RETURNING ` + storesql.TaskCols

// TransitionTask applies tr (guarded row update + event) in one transaction.
// ErrConflict when the move is not in the transition table, the task is no
// longer in tr.From, or a retry has none left; ErrNotFound for a missing task.
func (db *DB) TransitionTask(ctx context.Context, tr controlplane.Transition) (*controlplane.Task, error) {
	if err := storeutil.CheckTransition(tr); err != nil {
		return nil, err
	}
	var out *controlplane.Task
	err := db.write(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = db.transitionTx(ctx, tx, tr)
		return err
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
