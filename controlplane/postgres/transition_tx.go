package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// transitionTx applies tr inside tx with the same guarded statement as
// TransitionTask (transitionSQL), so that a state change commits together
// with the rows that go with it (an assignment, ledger rows). Under READ
// COMMITTED a racing transaction that changed the task first makes the
// guard fail here (ErrConflict), and the caller's whole transaction rolls
// back.
func (db *DB) transitionTx(ctx context.Context, tx pgx.Tx, tr controlplane.Transition) (*controlplane.Task, error) {
	if err := storeutil.CheckTransition(tr); err != nil {
		return nil, err
	}
	t, err := scanTask(tx.QueryRow(ctx, transitionSQL, transitionArgs(tr, db.now())...))
	if errors.Is(err, controlplane.ErrNotFound) {
		return nil, transitionGuardErrorTx(ctx, tx, tr)
	}
	if err != nil {
		return nil, fmt.Errorf("transition task %d: %w", tr.TaskID, err)
	}
	return t, nil
}

// transitionGuardErrorTx explains a failed guard from inside the
// transaction (its view of the row, not the pool's).
func transitionGuardErrorTx(ctx context.Context, tx pgx.Tx, tr controlplane.Transition) error {
	var state controlplane.TaskState
	var attempt, maxRetries int
	err := tx.QueryRow(ctx, `SELECT state, attempt, max_retries FROM tasks WHERE id = $1`, tr.TaskID).
		Scan(&state, &attempt, &maxRetries)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("transition task %d: %w", tr.TaskID, mapErr(err))
	}
	return storeutil.GuardError(tr, err == nil, state, attempt, maxRetries)
}
