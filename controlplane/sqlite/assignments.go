package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

var _ controlplane.NodeStore = (*DB)(nil)

// transitionTx applies tr inside tx (TransitionTask is it in a write
// transaction of its own): the guarded update and its events, so an
// assignment and its state change commit together.
func (db *DB) transitionTx(ctx context.Context, tx *sql.Tx, tr controlplane.Transition) (*controlplane.Task, error) {
	if err := storeutil.CheckTransition(tr); err != nil {
		return nil, err
	}
	now := db.now()
	var exit, node any
	if tr.ExitCode != nil {
		exit = *tr.ExitCode
	}
	if tr.NodeID != nil {
		node = *tr.NodeID
	}
	inc := 0
	if tr.Retry {
		inc = 1
	}
	t, err := scanTask(tx.QueryRowContext(ctx, transitionSQL, tr.To, tr.Reason, ts(now), inc, node, exit,
		tr.To.Terminal(), tr.TaskID, tr.From))
	if errors.Is(err, controlplane.ErrNotFound) {
		return nil, db.transitionGuardError(ctx, tx, tr)
	}
	if err != nil {
		return nil, fmt.Errorf("transition task %d: %w", tr.TaskID, err)
	}
	from := tr.From
	if tr.Via != "" { // the step through Via first: event IDs order the history
		if err := insertTransitionEvent(ctx, tx, tr.TaskID, from, tr.Via, tr.ViaReason, tr.Actor, now); err != nil {
			return nil, err
		}
		from = tr.Via
	}
	if err := insertTransitionEvent(ctx, tx, tr.TaskID, from, tr.To, tr.Reason, tr.Actor, now); err != nil {
		return nil, err
	}
	return t, nil
}

func insertTransitionEvent(ctx context.Context, tx *sql.Tx, taskID int64, from, to controlplane.TaskState, reason, actor string, now time.Time) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO task_events (task_id, from_state, to_state, reason, actor, at)
		VALUES (?, ?, ?, ?, ?, ?)`, taskID, from, to, reason, actor, ts(now)); err != nil {
		return fmt.Errorf("transition task %d event: %w", taskID, mapErr(err))
	}
	return nil
}
