package storesql

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// The writes that ride on a task transition: binding (ledger rows, run
// assignment), requeue, assignment and the agent's status reports. The
// transition itself is the store's (DB.TransitionTx): its guarded statement
// differs between the dialects.

// AssignTask inserts the run assignment and applies tr in one transaction.
func (q Queries) AssignTask(ctx context.Context, a *controlplane.Assignment, tr controlplane.Transition) (*controlplane.Task, error) {
	a.CreatedAt = q.db.Now()
	var t *controlplane.Task
	err := q.db.Tx(ctx, func(c Conn) error {
		var err error
		if t, err = q.db.TransitionTx(ctx, c, tr); err != nil {
			return err
		}
		a.Attempt = t.Attempt
		return InsertAssignment(ctx, q.db, c, a)
	})
	return t, err
}

// BindTasks: ledger rows + run assignment + queued → scheduled, for every
// binding, in one transaction. Each transition's guard locks its task row
// (SQLite: the write lock), so a task bound (or cancelled) concurrently by
// another transaction fails the guard and nothing of the batch is written.
func (q Queries) BindTasks(ctx context.Context, bs []controlplane.Binding) ([]*controlplane.Task, error) {
	now := q.db.Now()
	out := make([]*controlplane.Task, 0, len(bs))
	err := q.db.Tx(ctx, func(c Conn) error {
		out = out[:0]
		for _, b := range bs {
			t, err := q.db.TransitionTx(ctx, c, b.Transition)
			if err != nil {
				return err
			}
			for _, a := range b.Allocations {
				a.TaskID, a.Attempt, a.CreatedAt = t.ID, t.Attempt, now
				if err := InsertAllocation(ctx, q.db, c, a); err != nil {
					return err
				}
			}
			if b.Assignment != nil {
				b.Assignment.CreatedAt, b.Assignment.Attempt = now, t.Attempt
				if err := InsertAssignment(ctx, q.db, c, b.Assignment); err != nil {
					return err
				}
			}
			out = append(out, t)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// RequeueTask: see controlplane.SchedulingStore. The task row is locked
// first so that the attempt whose rows are marked draining is the one the
// transition leaves.
func (q Queries) RequeueTask(ctx context.Context, tr controlplane.Transition) (*controlplane.Task, error) {
	if err := storeutil.CheckRequeue(tr); err != nil {
		return nil, err
	}
	var out *controlplane.Task
	err := q.db.Tx(ctx, func(c Conn) error {
		var attempt int
		if err := c.QueryRow(ctx, `SELECT attempt FROM tasks WHERE id = $1`+q.db.ForUpdate(), tr.TaskID).Scan(&attempt); err != nil {
			return fmt.Errorf("task %d: %w", tr.TaskID, err)
		}
		t, err := q.db.TransitionTx(ctx, c, tr)
		if err != nil {
			return err
		}
		if _, err := c.Exec(ctx, `UPDATE allocations SET draining = TRUE WHERE task_id = $1 AND attempt = $2`,
			tr.TaskID, attempt); err != nil {
			return err
		}
		out = t
		return nil
	})
	return out, err
}

// ApplyNodeStatus applies one agent outbox entry exactly once (see
// controlplane.NodeStore): sequence guard, task transition when the table
// allows it from the current state, and closing of the assignments it
// answers — all in one transaction. The sequence update locks the node row,
// so two deliveries of one entry serialise and the second is a duplicate;
// the task row is read FOR UPDATE (PostgreSQL) so that the transition's guard
// sees the state the decision was made on (the scheduler may move the task
// at the same time from another server).
func (q Queries) ApplyNodeStatus(ctx context.Context, st controlplane.NodeStatus) (bool, error) {
	applied := false
	err := q.db.Tx(ctx, func(c Conn) error {
		applied = false
		n, err := c.Exec(ctx, `UPDATE nodes SET last_status_seq = $1 WHERE id = $2 AND last_status_seq < $1`,
			int64(st.Seq), st.NodeID)
		if err != nil {
			return err
		}
		if n == 0 { // a duplicate, or an unknown node
			var one int
			if err := c.QueryRow(ctx, `SELECT 1 FROM nodes WHERE id = $1`, st.NodeID).Scan(&one); err != nil {
				return fmt.Errorf("node %s: %w", st.NodeID, err)
			}
			return nil
		}
		applied = true
		now := q.db.Now()
		if st.To != "" && st.TaskID != 0 {
			if err := q.applyTaskStatus(ctx, c, st, now); err != nil {
				return err
			}
		}
		if st.AssignmentID != 0 {
			if _, err := c.Exec(ctx, `UPDATE assignments SET done_at = $1, result = COALESCE($2, result)
				WHERE id = $3 AND node_id = $4`, q.db.Time(now), storeutil.OptionalJSON(st.Result),
				st.AssignmentID, st.NodeID); err != nil {
				return err
			}
		}
		return nil
	})
	return applied, err
}

// applyTaskStatus is ApplyNodeStatus' task part.
func (q Queries) applyTaskStatus(ctx context.Context, c Conn, st controlplane.NodeStatus, now time.Time) error {
	var cur controlplane.TaskState
	var onNode string
	err := c.QueryRow(ctx, `SELECT state, node_id FROM tasks WHERE id = $1`+q.db.ForUpdate(), st.TaskID).Scan(&cur, &onNode)
	if err != nil && !errors.Is(err, controlplane.ErrNotFound) {
		return err
	}
	// Only the node the task is placed on may move it: a late report of a
	// run the scheduler stopped (preempted, requeued) must not end the
	// task's next placement.
	if err == nil && storeutil.ApplyStatusTransition(st, cur, onNode) {
		if _, err := q.db.TransitionTx(ctx, c, storeutil.StatusTransition(st, cur)); err != nil {
			return err
		}
	}
	at := q.db.Time(now)
	// The agent acted on the task: its run (and, once it ended, cancel)
	// items must not be delivered again.
	if _, err := c.Exec(ctx, `UPDATE assignments SET done_at = COALESCE(done_at, $1)
		WHERE node_id = $2 AND task_id = $3 AND kind = 'run'`, at, st.NodeID, st.TaskID); err != nil {
		return err
	}
	if !st.To.Terminal() {
		return nil
	}
	// The run's result records that the agent reported its end, so
	// RunsToStop leaves it alone.
	if _, err := c.Exec(ctx, `UPDATE assignments SET result = $1 WHERE node_id = $2 AND task_id = $3
		AND kind = 'run' AND result IS NULL`, storeutil.EndResult(st.To), st.NodeID, st.TaskID); err != nil {
		return err
	}
	_, err = c.Exec(ctx, `UPDATE assignments SET done_at = $1 WHERE node_id = $2 AND task_id = $3
		AND kind = 'cancel' AND done_at IS NULL`, at, st.NodeID, st.TaskID)
	return err
}
