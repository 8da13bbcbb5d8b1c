package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

var _ controlplane.NodeStore = (*DB)(nil)

const assignmentCols = `id, node_id, kind, task_id, attempt, payload, result, created_at, done_at`

func scanAssignment(row interface{ Scan(...any) error }) (*controlplane.Assignment, error) {
	var a controlplane.Assignment
	var payload []byte
	var result []byte
	var created int64
	var done sql.NullInt64
	if err := row.Scan(&a.ID, &a.NodeID, &a.Kind, &a.TaskID, &a.Attempt, &payload, &result, &created, &done); err != nil {
		return nil, mapErr(err)
	}
	a.Payload, a.Result = payload, result
	a.CreatedAt, a.DoneAt = fromTS(created), fromNullTS(done)
	return &a, nil
}

func insertAssignment(ctx context.Context, tx *sql.Tx, a *controlplane.Assignment) error {
	payload := storeutil.PayloadJSON(a.Payload)
	err := tx.QueryRowContext(ctx, `INSERT INTO assignments (node_id, kind, task_id, attempt, payload, created_at)
		VALUES (?, ?, ?, ?, ?, ?) RETURNING id`, a.NodeID, a.Kind, a.TaskID, a.Attempt, payload, ts(a.CreatedAt)).Scan(&a.ID)
	if err != nil {
		return fmt.Errorf("insert assignment: %w", mapErr(err))
	}
	return nil
}

// transitionTx applies tr inside tx: the same guarded update and event as
// TransitionTask, so an assignment and its state change commit together.
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
	if _, err := tx.ExecContext(ctx, `INSERT INTO task_events (task_id, from_state, to_state, reason, actor, at)
		VALUES (?, ?, ?, ?, ?, ?)`, tr.TaskID, tr.From, tr.To, tr.Reason, tr.Actor, ts(now)); err != nil {
		return nil, fmt.Errorf("transition task %d event: %w", tr.TaskID, mapErr(err))
	}
	return t, nil
}

// AssignTask inserts the run assignment and applies tr in one transaction.
func (db *DB) AssignTask(ctx context.Context, a *controlplane.Assignment, tr controlplane.Transition) (*controlplane.Task, error) {
	a.CreatedAt = db.now()
	var t *controlplane.Task
	err := db.write(ctx, func(tx *sql.Tx) error {
		var err error
		if t, err = db.transitionTx(ctx, tx, tr); err != nil {
			return err
		}
		a.Attempt = t.Attempt
		return insertAssignment(ctx, tx, a)
	})
	return t, err
}

// CreateAssignment queues a cancel or management item for a node.
func (db *DB) CreateAssignment(ctx context.Context, a *controlplane.Assignment) error {
	a.CreatedAt = db.now()
	return db.write(ctx, func(tx *sql.Tx) error { return insertAssignment(ctx, tx, a) })
}

// GetAssignment returns one assignment.
func (db *DB) GetAssignment(ctx context.Context, id int64) (*controlplane.Assignment, error) {
	var a *controlplane.Assignment
	err := db.read(ctx, func(tx *sql.Tx) error {
		var err error
		a, err = scanAssignment(tx.QueryRowContext(ctx, `SELECT `+assignmentCols+` FROM assignments WHERE id = ?`, id))
		return err
	})
	return a, err
}

// OpenAssignments lists a node's assignments not yet done, oldest first.
func (db *DB) OpenAssignments(ctx context.Context, nodeID string) ([]*controlplane.Assignment, error) {
	return queryAll(ctx, db, scanAssignment, `SELECT `+assignmentCols+` FROM assignments
			WHERE node_id = ? AND done_at IS NULL ORDER BY id`, nodeID)
}

// ApplyNodeStatus applies one agent outbox entry exactly once (see
// controlplane.NodeStore): sequence guard, task transition when the table
// allows it from the current state, and closing of the assignments it
// answers — all in one transaction.
func (db *DB) ApplyNodeStatus(ctx context.Context, st controlplane.NodeStatus) (bool, error) {
	applied := false
	err := db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE nodes SET last_status_seq = ? WHERE id = ? AND last_status_seq < ?`,
			int64(st.Seq), st.NodeID, int64(st.Seq))
		if err != nil {
			return mapErr(err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			if _, err := db.nodeExists(ctx, tx, st.NodeID); err != nil {
				return err
			}
			return nil // duplicate
		}
		applied = true
		now := ts(db.now())
		if st.To != "" && st.TaskID != 0 {
			var cur controlplane.TaskState
			var onNode string
			err := tx.QueryRowContext(ctx, `SELECT state, node_id FROM tasks WHERE id = ?`, st.TaskID).Scan(&cur, &onNode)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return mapErr(err)
			}
			// Only the node the task is placed on may move it: a late report
			// of a run the scheduler stopped (preempted, requeued) must not
			// end the task's next placement.
			if err == nil && storeutil.ApplyStatusTransition(st, cur, onNode) {
				if _, err := db.transitionTx(ctx, tx, storeutil.StatusTransition(st, cur)); err != nil {
					return err
				}
			}
			// The agent acted on the task: its run (and, once it ended, cancel)
			// items must not be delivered again.
			if _, err := tx.ExecContext(ctx, `UPDATE assignments SET done_at = COALESCE(done_at, ?)
				WHERE node_id = ? AND task_id = ? AND kind = 'run'`, now, st.NodeID, st.TaskID); err != nil {
				return mapErr(err)
			}
			if st.To.Terminal() {
				// The run's result records that the agent reported its end, so
				// RunsToStop leaves it alone.
				if _, err := tx.ExecContext(ctx, `UPDATE assignments SET result = ? WHERE node_id = ? AND task_id = ?
					AND kind = 'run' AND result IS NULL`, storeutil.EndResult(st.To), st.NodeID, st.TaskID); err != nil {
					return mapErr(err)
				}
				if _, err := tx.ExecContext(ctx, `UPDATE assignments SET done_at = ? WHERE node_id = ? AND task_id = ?
					AND kind = 'cancel' AND done_at IS NULL`, now, st.NodeID, st.TaskID); err != nil {
					return mapErr(err)
				}
			}
		}
		if st.AssignmentID != 0 {
			var result any
			if len(st.Result) > 0 {
				result = string(st.Result)
			}
			if _, err := tx.ExecContext(ctx, `UPDATE assignments SET done_at = ?, result = COALESCE(?, result)
				WHERE id = ? AND node_id = ?`, now, result, st.AssignmentID, st.NodeID); err != nil {
				return mapErr(err)
			}
		}
		return nil
	})
	return applied, err
}

func (db *DB) nodeExists(ctx context.Context, tx *sql.Tx, id string) (bool, error) {
	var one int
	if err := tx.QueryRowContext(ctx, `SELECT 1 FROM nodes WHERE id = ?`, id).Scan(&one); err != nil {
		return false, fmt.Errorf("node %s: %w", id, mapErr(err))
	}
	return true, nil
}

// CloseAssignment marks an assignment done.
func (db *DB) CloseAssignment(ctx context.Context, id int64, result json.RawMessage) error {
	var r any
	if len(result) > 0 {
		r = string(result)
	}
	return db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE assignments SET done_at = COALESCE(done_at, ?), result = COALESCE(?, result)
			WHERE id = ?`, ts(db.now()), r, id)
		if err != nil {
			return mapErr(err)
		}
		return affected(res, fmt.Sprintf("assignment %d", id))
	})
}

// RunsToStop: see controlplane.NodeStore.
func (db *DB) RunsToStop(ctx context.Context, since time.Time) ([]*controlplane.Assignment, error) {
	return queryAll(ctx, db, scanAssignment, `SELECT a.id, a.node_id, a.kind, a.task_id, a.attempt, a.payload, a.result,
			a.created_at, a.done_at FROM assignments a JOIN tasks t ON t.id = a.task_id
			WHERE a.kind = 'run' AND a.created_at > ? AND a.result IS NULL
			AND (t.state IN ('cancelled', 'timed_out', 'failed', 'queued') OR t.attempt <> a.attempt OR t.node_id <> a.node_id)
			AND NOT EXISTS (SELECT 1 FROM assignments c WHERE c.kind = 'cancel' AND c.task_id = a.task_id
				AND c.attempt = a.attempt AND c.node_id = a.node_id)
			ORDER BY a.id`, ts(since))
}
