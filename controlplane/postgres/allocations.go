package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/heteroflow/heteroflow/controlplane"
)

var _ controlplane.SchedulingStore = (*DB)(nil)

// ReleaseStale: see controlplane.SchedulingStore. One statement deletes
// the rows, keeps them as released intervals for usage metering and
// reports the placements, so the three agree exactly.
func (db *DB) ReleaseStale(ctx context.Context) ([]controlplane.AllocationKey, error) {
	rows, err := db.pool.Query(ctx, `WITH d AS (
		DELETE FROM allocations WHERE NOT draining AND NOT EXISTS (SELECT 1 FROM tasks t
			WHERE t.id = allocations.task_id AND t.attempt = allocations.attempt
			AND t.node_id = allocations.node_id AND t.state IN ('scheduled', 'running'))
		RETURNING *
	), h AS (`+historyInsert+` FROM d LEFT JOIN tasks t ON t.id = d.task_id ON CONFLICT (id) DO NOTHING
	) SELECT DISTINCT task_id, attempt FROM d ORDER BY task_id, attempt`, db.now())
	if err != nil {
		return nil, mapErr(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (controlplane.AllocationKey, error) {
		var k controlplane.AllocationKey
		err := r.Scan(&k.TaskID, &k.Attempt)
		return k, err
	})
	return out, mapErr(err)
}

// historyInsert copies deleted ledger rows (the CTE d) into
// allocation_history with the release time $1.
const historyInsert = `INSERT INTO allocation_history (id, task_id, attempt, node_id, device_pos, device_index,
	device_uuid, vendor, model, memory_mib, compute_milli, qos, isolation, profile, part_start, cpu_milli,
	host_memory_mib, tenant, project, priority, draining, created_at, owner_id, owner, released_at)
	SELECT d.id, d.task_id, d.attempt, d.node_id, d.device_pos, d.device_index, d.device_uuid, d.vendor, d.model,
	d.memory_mib, d.compute_milli, d.qos, d.isolation, d.profile, d.part_start, d.cpu_milli, d.host_memory_mib,
	d.tenant, d.project, d.priority, d.draining, d.created_at, t.owner_id, COALESCE(t.owner, ''), $1::timestamptz`

// ReleaseAllocations: see controlplane.SchedulingStore. The rows are kept
// as released intervals in the same statement.
func (db *DB) ReleaseAllocations(ctx context.Context, k controlplane.AllocationKey) error {
	_, err := db.pool.Exec(ctx, `WITH d AS (DELETE FROM allocations WHERE task_id = $2 AND attempt = $3 RETURNING *)
		`+historyInsert+` FROM d LEFT JOIN tasks t ON t.id = d.task_id ON CONFLICT (id) DO NOTHING`,
		db.now(), k.TaskID, k.Attempt)
	return mapErr(err)
}
