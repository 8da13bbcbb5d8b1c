package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// AppendTaskLogs stores chunks; a chunk already stored at the same offset
// is ignored, so an agent's resend is harmless.
func (db *DB) AppendTaskLogs(ctx context.Context, chunks []*controlplane.TaskLogChunk) error {
	if len(chunks) == 0 {
		return nil
	}
	return db.write(ctx, func(tx *sql.Tx) error {
		for _, c := range chunks {
			if _, err := tx.ExecContext(ctx, `INSERT INTO task_logs (task_id, attempt, stream, offset, data)
				VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`, c.TaskID, c.Attempt, c.Stream, c.Offset, c.Data); err != nil {
				if isForeignKey(err) {
					return fmt.Errorf("%w: task %d does not exist", controlplane.ErrNotFound, c.TaskID)
				}
				return fmt.Errorf("store task log: %w", mapErr(err))
			}
		}
		return nil
	})
}

// ReadTaskLogs returns a stream's chunks at or after offset.
func (db *DB) ReadTaskLogs(ctx context.Context, taskID int64, attempt int, stream string, offset int64, limit int) ([]*controlplane.TaskLogChunk, error) {
	limit = storeutil.LogLimit(limit)
	var out []*controlplane.TaskLogChunk
	err := db.read(ctx, func(tx *sql.Tx) error {
		// The chunk that contains offset starts at or before it.
		rows, err := tx.QueryContext(ctx, `SELECT offset, data FROM task_logs WHERE task_id = ? AND attempt = ?
			AND stream = ? AND offset + length(data) > ? ORDER BY offset LIMIT ?`, taskID, attempt, stream, offset, limit)
		if err != nil {
			return mapErr(err)
		}
		defer rows.Close()
		for rows.Next() {
			c := &controlplane.TaskLogChunk{TaskID: taskID, Attempt: attempt, Stream: stream}
			if err := rows.Scan(&c.Offset, &c.Data); err != nil {
				return mapErr(err)
			}
			out = append(out, c)
		}
		return mapErr(rows.Err())
	})
	return out, err
}
