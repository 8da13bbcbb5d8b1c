package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

var _ controlplane.NodeStore = (*DB)(nil)

const assignmentCols = `id, node_id, kind, task_id, attempt, payload, result, created_at, done_at`

func scanAssignment(row pgx.Row) (*controlplane.Assignment, error) {
	var a controlplane.Assignment
	var payload, result []byte
	if err := row.Scan(&a.ID, &a.NodeID, &a.Kind, &a.TaskID, &a.Attempt, &payload, &result, &a.CreatedAt, &a.DoneAt); err != nil {
		return nil, mapErr(err)
	}
	a.Payload, a.Result = payload, result
	a.CreatedAt, a.DoneAt = utc(a.CreatedAt), utcPtr(a.DoneAt)
	return &a, nil
}

func scanAssignments(rows pgx.Rows, err error) ([]*controlplane.Assignment, error) {
	if err != nil {
		return nil, mapErr(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*controlplane.Assignment, error) {
		return scanAssignment(r)
	})
	return out, mapErr(err)
}

func insertAssignment(ctx context.Context, tx pgx.Tx, a *controlplane.Assignment) error {
	err := tx.QueryRow(ctx, `INSERT INTO assignments (node_id, kind, task_id, attempt, payload, created_at)
		VALUES ($1, $2, $3, $4, $5::jsonb, $6) RETURNING id`, a.NodeID, a.Kind, a.TaskID, a.Attempt,
		storeutil.PayloadJSON(a.Payload), a.CreatedAt).Scan(&a.ID)
	if err != nil {
		return fmt.Errorf("insert assignment: %w", mapErr(err))
	}
	return nil
}

// AssignTask inserts the run assignment and applies tr in one transaction.
func (db *DB) AssignTask(ctx context.Context, a *controlplane.Assignment, tr controlplane.Transition) (*controlplane.Task, error) {
	a.CreatedAt = db.now()
	var t *controlplane.Task
	err := db.tx(ctx, func(tx pgx.Tx) error {
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
	return db.tx(ctx, func(tx pgx.Tx) error { return insertAssignment(ctx, tx, a) })
}

// GetAssignment returns one assignment.
func (db *DB) GetAssignment(ctx context.Context, id int64) (*controlplane.Assignment, error) {
	return scanAssignment(db.pool.QueryRow(ctx, `SELECT `+assignmentCols+` FROM assignments WHERE id = $1`, id))
}

// OpenAssignments lists a node's assignments not yet done, oldest first.
func (db *DB) OpenAssignments(ctx context.Context, nodeID string) ([]*controlplane.Assignment, error) {
	return scanAssignments(db.pool.Query(ctx, `SELECT `+assignmentCols+` FROM assignments
		WHERE node_id = $1 AND done_at IS NULL ORDER BY id`, nodeID))
}

// ApplyNodeStatus applies one agent outbox entry exactly once (see
// controlplane.NodeStore): sequence guard, task transition when the table
// allows it from the current state, and closing of the assignments it
// answers — all in one transaction. The sequence update locks the node row,
// so two deliveries of one entry serialise and the second is a duplicate;
// the task row is read FOR UPDATE so that the transition's guard sees the
// state the decision was made on (the scheduler may move the task at the
// same time from another server).
func (db *DB) ApplyNodeStatus(ctx context.Context, st controlplane.NodeStatus) (bool, error) {
	applied := false
	err := db.tx(ctx, func(tx pgx.Tx) error {
		applied = false
		tag, err := tx.Exec(ctx, `UPDATE nodes SET last_status_seq = $1 WHERE id = $2 AND last_status_seq < $1`,
			int64(st.Seq), st.NodeID)
		if err != nil {
			return mapErr(err)
		}
		if tag.RowsAffected() == 0 {
			return nodeExists(ctx, tx, st.NodeID) // duplicate, or an unknown node
		}
		applied = true
		now := db.now()
		if st.To != "" && st.TaskID != 0 {
			if err := db.applyTaskStatus(ctx, tx, st, now); err != nil {
				return err
			}
		}
		if st.AssignmentID != 0 {
			if _, err := tx.Exec(ctx, `UPDATE assignments SET done_at = $1, result = COALESCE($2::jsonb, result)
				WHERE id = $3 AND node_id = $4`, now, storeutil.OptionalJSON(st.Result), st.AssignmentID, st.NodeID); err != nil {
				return mapErr(err)
			}
		}
		return nil
	})
	return applied, err
}

// applyTaskStatus is ApplyNodeStatus' task part.
func (db *DB) applyTaskStatus(ctx context.Context, tx pgx.Tx, st controlplane.NodeStatus, now time.Time) error {
	var cur controlplane.TaskState
	var onNode string
	err := tx.QueryRow(ctx, `SELECT state, node_id FROM tasks WHERE id = $1 FOR UPDATE`, st.TaskID).Scan(&cur, &onNode)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return mapErr(err)
	}
	if err == nil && storeutil.ApplyStatusTransition(st, cur, onNode) {
		if _, err := db.transitionTx(ctx, tx, storeutil.StatusTransition(st, cur)); err != nil {
			return err
		}
	}
	// The agent acted on the task: its run (and, once it ended, cancel)
	// items must not be delivered again.
	if _, err := tx.Exec(ctx, `UPDATE assignments SET done_at = COALESCE(done_at, $1)
		WHERE node_id = $2 AND task_id = $3 AND kind = 'run'`, now, st.NodeID, st.TaskID); err != nil {
		return mapErr(err)
	}
	if !st.To.Terminal() {
		return nil
	}
	// The run's result records that the agent reported its end, so
	// RunsToStop leaves it alone.
	if _, err := tx.Exec(ctx, `UPDATE assignments SET result = $1::jsonb WHERE node_id = $2 AND task_id = $3
		AND kind = 'run' AND result IS NULL`, storeutil.EndResult(st.To), st.NodeID, st.TaskID); err != nil {
		return mapErr(err)
	}
	if _, err := tx.Exec(ctx, `UPDATE assignments SET done_at = $1 WHERE node_id = $2 AND task_id = $3
		AND kind = 'cancel' AND done_at IS NULL`, now, st.NodeID, st.TaskID); err != nil {
		return mapErr(err)
	}
	return nil
}

func nodeExists(ctx context.Context, tx pgx.Tx, id string) error {
	var one int
	if err := tx.QueryRow(ctx, `SELECT 1 FROM nodes WHERE id = $1`, id).Scan(&one); err != nil {
		return fmt.Errorf("node %s: %w", id, mapErr(err))
	}
	return nil
}

// CloseAssignment marks an assignment done.
func (db *DB) CloseAssignment(ctx context.Context, id int64, result json.RawMessage) error {
	tag, err := db.pool.Exec(ctx, `UPDATE assignments SET done_at = COALESCE(done_at, $1), result = COALESCE($2::jsonb, result)
		WHERE id = $3`, db.now(), storeutil.OptionalJSON(result), id)
	if err != nil {
		return mapErr(err)
	}
	return affected(tag, fmt.Sprintf("assignment %d", id))
}

// RunsToStop: see controlplane.NodeStore.
func (db *DB) RunsToStop(ctx context.Context, since time.Time) ([]*controlplane.Assignment, error) {
	return scanAssignments(db.pool.Query(ctx, `SELECT a.id, a.node_id, a.kind, a.task_id, a.attempt, a.payload,
		a.result, a.created_at, a.done_at FROM assignments a JOIN tasks t ON t.id = a.task_id
		WHERE a.kind = 'run' AND a.created_at > $1 AND a.result IS NULL
		AND (t.state IN ('cancelled', 'timed_out', 'failed', 'queued') OR t.attempt <> a.attempt OR t.node_id <> a.node_id)
		AND NOT EXISTS (SELECT 1 FROM assignments c WHERE c.kind = 'cancel' AND c.task_id = a.task_id
			AND c.attempt = a.attempt AND c.node_id = a.node_id)
		ORDER BY a.id`, storeutil.Trunc(since)))
}
