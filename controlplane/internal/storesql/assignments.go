package storesql

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

const assignmentCols = `id, node_id, kind, task_id, attempt, payload, result, created_at, done_at`

func (q Queries) scanAssignment(row Row) (*controlplane.Assignment, error) {
	var a controlplane.Assignment
	var payload, result []byte
	if err := row.Scan(&a.ID, &a.NodeID, &a.Kind, &a.TaskID, &a.Attempt, &payload, &result,
		q.db.ScanTime(&a.CreatedAt), q.db.ScanNullTime(&a.DoneAt)); err != nil {
		return nil, err
	}
	a.Payload, a.Result = payload, result
	return &a, nil
}

// InsertAssignment inserts a (CreatedAt set by the caller) on c and sets its ID.
func InsertAssignment(ctx context.Context, d Dialect, c Conn, a *controlplane.Assignment) error {
	err := c.QueryRow(ctx, `INSERT INTO assignments (node_id, kind, task_id, attempt, payload, created_at)
		VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`, a.NodeID, a.Kind, a.TaskID, a.Attempt,
		storeutil.PayloadJSON(a.Payload), d.Time(a.CreatedAt)).Scan(&a.ID)
	if err != nil {
		return fmt.Errorf("insert assignment: %w", err)
	}
	return nil
}

// CreateAssignment queues a cancel or management item for a node.
func (q Queries) CreateAssignment(ctx context.Context, a *controlplane.Assignment) error {
	a.CreatedAt = q.db.Now()
	return q.db.Write(ctx, func(c Conn) error { return InsertAssignment(ctx, q.db, c, a) })
}

// GetAssignment returns one assignment.
func (q Queries) GetAssignment(ctx context.Context, id int64) (*controlplane.Assignment, error) {
	return q.scanAssignment(q.db.Reader().QueryRow(ctx, `SELECT `+assignmentCols+` FROM assignments WHERE id = $1`, id))
}

// OpenAssignments lists a node's assignments not yet done, oldest first.
func (q Queries) OpenAssignments(ctx context.Context, nodeID string) ([]*controlplane.Assignment, error) {
	return all(ctx, q.db.Reader(), q.scanAssignment, `SELECT `+assignmentCols+` FROM assignments
		WHERE node_id = $1 AND done_at IS NULL ORDER BY id`, nodeID)
}

// CloseAssignment marks an assignment done.
func (q Queries) CloseAssignment(ctx context.Context, id int64, result json.RawMessage) error {
	return q.db.Write(ctx, func(c Conn) error {
		n, err := c.Exec(ctx, `UPDATE assignments SET done_at = COALESCE(done_at, $1), result = COALESCE($2, result)
			WHERE id = $3`, q.db.Time(q.db.Now()), storeutil.OptionalJSON(result), id)
		return affected(n, err, fmt.Sprintf("assignment %d", id))
	})
}

// RunsToStop: see controlplane.NodeStore.
func (q Queries) RunsToStop(ctx context.Context, since time.Time) ([]*controlplane.Assignment, error) {
	return all(ctx, q.db.Reader(), q.scanAssignment, `SELECT a.id, a.node_id, a.kind, a.task_id, a.attempt, a.payload,
		a.result, a.created_at, a.done_at FROM assignments a JOIN tasks t ON t.id = a.task_id
		WHERE a.kind = 'run' AND a.created_at > $1 AND a.result IS NULL
		AND (t.state IN ('cancelled', 'timed_out', 'failed', 'queued') OR t.attempt <> a.attempt OR t.node_id <> a.node_id)
		AND NOT EXISTS (SELECT 1 FROM assignments c WHERE c.kind = 'cancel' AND c.task_id = a.task_id
			AND c.attempt = a.attempt AND c.node_id = a.node_id)
		ORDER BY a.id`, q.db.Time(storeutil.Trunc(since)))
}
