package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// AppendTaskLogs stores chunks in one statement; a chunk already stored at
// the same offset is ignored, so an agent's resend is harmless.
func (db *DB) AppendTaskLogs(ctx context.Context, chunks []*controlplane.TaskLogChunk) error {
	if len(chunks) == 0 {
		return nil
	}
	ids := make([]int64, len(chunks))
	attempts := make([]int32, len(chunks))
	streams := make([]string, len(chunks))
	offsets := make([]int64, len(chunks))
	data := make([][]byte, len(chunks))
	for i, c := range chunks {
		ids[i], attempts[i], streams[i], offsets[i], data[i] = c.TaskID, int32(c.Attempt), c.Stream, c.Offset, c.Data
		if data[i] == nil {
			data[i] = []byte{} // NOT NULL column; an empty chunk is still a chunk
		}
	}
	_, err := db.pool.Exec(ctx, `INSERT INTO task_logs (task_id, attempt, stream, byte_offset, data)
		SELECT * FROM unnest($1::bigint[], $2::int[], $3::text[], $4::bigint[], $5::bytea[])
		ON CONFLICT DO NOTHING`, ids, attempts, streams, offsets, data)
	if isForeignKey(err) {
		return fmt.Errorf("%w: task of a log chunk does not exist", controlplane.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("store task log: %w", mapErr(err))
	}
	return nil
}

// ReadTaskLogs returns a stream's chunks at or after offset.
func (db *DB) ReadTaskLogs(ctx context.Context, taskID int64, attempt int, stream string, offset int64, limit int) ([]*controlplane.TaskLogChunk, error) {
	// The chunk that contains offset starts at or before it.
	rows, err := db.pool.Query(ctx, `SELECT byte_offset, data FROM task_logs WHERE task_id = $1 AND attempt = $2
		AND stream = $3 AND byte_offset + octet_length(data) > $4 ORDER BY byte_offset LIMIT $5`,
		taskID, attempt, stream, offset, storeutil.LogLimit(limit))
	if err != nil {
		return nil, mapErr(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*controlplane.TaskLogChunk, error) {
		c := &controlplane.TaskLogChunk{TaskID: taskID, Attempt: attempt, Stream: stream}
		err := r.Scan(&c.Offset, &c.Data)
		return c, err
	})
	return out, mapErr(err)
}
