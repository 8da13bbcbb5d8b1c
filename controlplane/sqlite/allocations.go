package sqlite

import (
	"context"
	"database/sql"
	"strings"

	"github.com/heteroflow/heteroflow/controlplane"
)

var _ controlplane.SchedulingStore = (*DB)(nil)

// staleWhere selects ledger rows whose attempt is no longer placed: the task
// left scheduled/running, moved on to another attempt or node (or is gone).
const staleWhere = `allocations.draining = 0 AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.id = allocations.task_id
	AND t.attempt = allocations.attempt AND t.node_id = allocations.node_id AND t.state IN ('scheduled', 'running'))`

// ReleaseStale: see controlplane.SchedulingStore.
func (db *DB) ReleaseStale(ctx context.Context) ([]controlplane.AllocationKey, error) {
	var out []controlplane.AllocationKey
	err := db.write(ctx, func(tx *sql.Tx) error {
		out = out[:0]
		rows, err := tx.QueryContext(ctx, `SELECT DISTINCT task_id, attempt FROM allocations WHERE `+staleWhere)
		if err != nil {
			return mapErr(err)
		}
		for rows.Next() {
			var k controlplane.AllocationKey
			if err := rows.Scan(&k.TaskID, &k.Attempt); err != nil {
				rows.Close()
				return mapErr(err)
			}
			out = append(out, k)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return mapErr(err)
		}
		if len(out) == 0 {
			return nil
		}
		return db.releaseTx(ctx, tx, staleWhere)
	})
	return out, err
}

// ReleaseAllocations: see controlplane.SchedulingStore.
func (db *DB) ReleaseAllocations(ctx context.Context, k controlplane.AllocationKey) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		return db.releaseTx(ctx, tx, `allocations.task_id = ? AND allocations.attempt = ?`, k.TaskID, k.Attempt)
	})
}

// releaseTx keeps the ledger rows matching where as released intervals for
// usage metering, then deletes them; the writer transaction is exclusive,
// so both statements see the same rows.
func (db *DB) releaseTx(ctx context.Context, tx *sql.Tx, where string, args ...any) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO allocation_history (id, task_id, attempt, node_id, device_pos,
		device_index, device_uuid, vendor, model, memory_mib, compute_milli, qos, isolation, profile, part_start,
		cpu_milli, host_memory_mib, tenant, project, priority, draining, created_at, owner_id, owner, released_at)
		SELECT a.id, a.task_id, a.attempt, a.node_id, a.device_pos, a.device_index, a.device_uuid, a.vendor, a.model,
		a.memory_mib, a.compute_milli, a.qos, a.isolation, a.profile, a.part_start, a.cpu_milli, a.host_memory_mib,
		a.tenant, a.project, a.priority, a.draining, a.created_at, t.owner_id, COALESCE(t.owner, ''), ?
		FROM allocations a LEFT JOIN tasks t ON t.id = a.task_id WHERE `+strings.ReplaceAll(where, "allocations.", "a.")+
		` AND true ON CONFLICT (id) DO NOTHING`, append([]any{ts(db.now())}, args...)...); err != nil {
		return mapErr(err)
	}
	_, err := tx.ExecContext(ctx, `DELETE FROM allocations WHERE `+where, args...)
	return mapErr(err)
}
