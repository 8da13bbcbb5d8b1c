package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

var _ controlplane.SchedulingStore = (*DB)(nil)

const allocCols = `id, task_id, attempt, node_id, device_pos, device_index, device_uuid, vendor, model,
	memory_mib, compute_milli, qos, isolation, profile, part_start, cpu_milli, host_memory_mib,
	tenant, project, priority, draining, created_at`

func scanAllocation(row pgx.Row) (*controlplane.Allocation, error) {
	var a controlplane.Allocation
	if err := row.Scan(&a.ID, &a.TaskID, &a.Attempt, &a.NodeID, &a.DevicePos, &a.DeviceIndex, &a.DeviceUUID,
		&a.Vendor, &a.Model, &a.MemoryMiB, &a.ComputeMilli, &a.QoS, &a.Isolation, &a.Profile, &a.PartStart,
		&a.CPUMilli, &a.HostMemoryMiB, &a.Tenant, &a.Project, &a.Priority, &a.Draining, &a.CreatedAt); err != nil {
		return nil, mapErr(err)
	}
	a.CreatedAt = utc(a.CreatedAt)
	return &a, nil
}

// scanTasks collects a task query's rows.
func scanTasks(rows pgx.Rows, err error) ([]*controlplane.Task, error) {
	if err != nil {
		return nil, mapErr(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*controlplane.Task, error) { return scanTask(r) })
	return out, mapErr(err)
}

// ListTasksByState: see controlplane.SchedulingStore.
func (db *DB) ListTasksByState(ctx context.Context, states []controlplane.TaskState, limit int) ([]*controlplane.Task, error) {
	if len(states) == 0 {
		return nil, nil
	}
	ss := make([]string, len(states))
	for i, s := range states {
		ss[i] = string(s)
	}
	return scanTasks(db.pool.Query(ctx, `SELECT `+taskCols+` FROM tasks WHERE state = ANY($1::text[])
		ORDER BY priority DESC, created_at, id LIMIT $2`, ss, storeutil.ListLimit(limit)))
}

// BindTasks: ledger rows + run assignment + queued → scheduled, for every
// binding, in one transaction. Each transition's guard locks its task row,
// so a task bound (or cancelled) concurrently by another transaction fails
// the guard and nothing of the batch is written.
func (db *DB) BindTasks(ctx context.Context, bs []controlplane.Binding) ([]*controlplane.Task, error) {
	now := db.now()
	out := make([]*controlplane.Task, 0, len(bs))
	err := db.tx(ctx, func(tx pgx.Tx) error {
		out = out[:0]
		for _, b := range bs {
			t, err := db.transitionTx(ctx, tx, b.Transition)
			if err != nil {
				return err
			}
			for _, a := range b.Allocations {
				a.TaskID, a.Attempt, a.CreatedAt = t.ID, t.Attempt, now
				if err := tx.QueryRow(ctx, `INSERT INTO allocations (task_id, attempt, node_id, device_pos,
					device_index, device_uuid, vendor, model, memory_mib, compute_milli, qos, isolation, profile,
					part_start, cpu_milli, host_memory_mib, tenant, project, priority, draining, created_at)
					VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, FALSE, $20)
					RETURNING id`,
					a.TaskID, a.Attempt, a.NodeID, a.DevicePos, a.DeviceIndex, a.DeviceUUID, a.Vendor, a.Model,
					a.MemoryMiB, a.ComputeMilli, string(a.QoS), a.Isolation, a.Profile, a.PartStart, a.CPUMilli,
					a.HostMemoryMiB, a.Tenant, a.Project, a.Priority, now).Scan(&a.ID); err != nil {
					return fmt.Errorf("insert allocation of task %d: %w", t.ID, mapErr(err))
				}
			}
			if b.Assignment != nil {
				b.Assignment.CreatedAt, b.Assignment.Attempt = now, t.Attempt
				if err := insertAssignment(ctx, tx, b.Assignment); err != nil {
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
func (db *DB) RequeueTask(ctx context.Context, tr controlplane.Transition) (*controlplane.Task, error) {
	if err := storeutil.CheckRequeue(tr); err != nil {
		return nil, err
	}
	var out *controlplane.Task
	err := db.tx(ctx, func(tx pgx.Tx) error {
		var attempt int
		if err := tx.QueryRow(ctx, `SELECT attempt FROM tasks WHERE id = $1 FOR UPDATE`, tr.TaskID).Scan(&attempt); err != nil {
			return fmt.Errorf("task %d: %w", tr.TaskID, mapErr(err))
		}
		t, err := db.transitionTx(ctx, tx, tr)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE allocations SET draining = TRUE WHERE task_id = $1 AND attempt = $2`,
			tr.TaskID, attempt); err != nil {
			return mapErr(err)
		}
		out = t
		return nil
	})
	return out, err
}

// ListAllocations: see controlplane.SchedulingStore.
func (db *DB) ListAllocations(ctx context.Context, nodeID string) ([]*controlplane.Allocation, error) {
	q := `SELECT ` + allocCols + ` FROM allocations`
	var a args
	if nodeID != "" {
		q += ` WHERE node_id = ` + a.add(nodeID)
	}
	rows, err := db.pool.Query(ctx, q+` ORDER BY task_id, attempt, device_pos`, a...)
	if err != nil {
		return nil, mapErr(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*controlplane.Allocation, error) { return scanAllocation(r) })
	return out, mapErr(err)
}

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

// ListRetryable: see controlplane.SchedulingStore.
func (db *DB) ListRetryable(ctx context.Context, limit int) ([]*controlplane.Task, error) {
	return scanTasks(db.pool.Query(ctx, `SELECT `+taskCols+` FROM tasks WHERE state IN ('failed', 'timed_out')
		AND attempt < max_retries AND NOT EXISTS (SELECT 1 FROM task_schedule s WHERE s.task_id = tasks.id AND s.final)
		ORDER BY finished_at, id LIMIT $1`, storeutil.ListLimit(limit)))
}
