package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

var _ controlplane.SchedulingStore = (*DB)(nil)

const allocCols = `id, task_id, attempt, node_id, device_pos, device_index, device_uuid, vendor, model,
	memory_mib, compute_milli, qos, isolation, profile, part_start, cpu_milli, host_memory_mib,
	tenant, project, priority, draining, created_at`

func scanAllocation(row interface{ Scan(...any) error }) (*controlplane.Allocation, error) {
	var a controlplane.Allocation
	var created int64
	if err := row.Scan(&a.ID, &a.TaskID, &a.Attempt, &a.NodeID, &a.DevicePos, &a.DeviceIndex, &a.DeviceUUID,
		&a.Vendor, &a.Model, &a.MemoryMiB, &a.ComputeMilli, &a.QoS, &a.Isolation, &a.Profile, &a.PartStart,
		&a.CPUMilli, &a.HostMemoryMiB, &a.Tenant, &a.Project, &a.Priority, &a.Draining, &created); err != nil {
		return nil, mapErr(err)
	}
	a.CreatedAt = fromTS(created)
	return &a, nil
}

// ListTasksByState: see controlplane.SchedulingStore.
func (db *DB) ListTasksByState(ctx context.Context, states []controlplane.TaskState, limit int) ([]*controlplane.Task, error) {
	if len(states) == 0 {
		return nil, nil
	}
	limit = storeutil.ListLimit(limit)
	args := make([]any, 0, len(states)+1)
	for _, s := range states {
		args = append(args, string(s))
	}
	args = append(args, limit)
	q := `SELECT ` + taskCols + ` FROM tasks WHERE state IN (?` + strings.Repeat(", ?", len(states)-1) +
		`) ORDER BY priority DESC, created_at, id LIMIT ?`
	return queryAll(ctx, db, scanTask, q, args...)
}

// BindTasks: ledger rows + run assignment + queued → scheduled, for every
// binding, in one transaction.
func (db *DB) BindTasks(ctx context.Context, bs []controlplane.Binding) ([]*controlplane.Task, error) {
	now := db.now()
	out := make([]*controlplane.Task, 0, len(bs))
	err := db.write(ctx, func(tx *sql.Tx) error {
		out = out[:0]
		for _, b := range bs {
			t, err := db.transitionTx(ctx, tx, b.Transition)
			if err != nil {
				return err
			}
			for _, a := range b.Allocations {
				a.TaskID, a.Attempt, a.CreatedAt = t.ID, t.Attempt, now
				if err := tx.QueryRowContext(ctx, `INSERT INTO allocations (task_id, attempt, node_id, device_pos,
					device_index, device_uuid, vendor, model, memory_mib, compute_milli, qos, isolation, profile,
					part_start, cpu_milli, host_memory_mib, tenant, project, priority, draining, created_at)
					VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?) RETURNING id`,
					a.TaskID, a.Attempt, a.NodeID, a.DevicePos, a.DeviceIndex, a.DeviceUUID, a.Vendor, a.Model,
					a.MemoryMiB, a.ComputeMilli, a.QoS, a.Isolation, a.Profile, a.PartStart, a.CPUMilli,
					a.HostMemoryMiB, a.Tenant, a.Project, a.Priority, ts(now)).Scan(&a.ID); err != nil {
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

// RequeueTask: see controlplane.SchedulingStore.
func (db *DB) RequeueTask(ctx context.Context, tr controlplane.Transition) (*controlplane.Task, error) {
	if err := storeutil.CheckRequeue(tr); err != nil {
		return nil, err
	}
	var out *controlplane.Task
	err := db.write(ctx, func(tx *sql.Tx) error {
		var attempt int
		if err := tx.QueryRowContext(ctx, `SELECT attempt FROM tasks WHERE id = ?`, tr.TaskID).Scan(&attempt); err != nil {
			return fmt.Errorf("task %d: %w", tr.TaskID, mapErr(err))
		}
		t, err := db.transitionTx(ctx, tx, tr)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE allocations SET draining = 1 WHERE task_id = ? AND attempt = ?`,
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
	var args []any
	if nodeID != "" {
		q += ` WHERE node_id = ?`
		args = append(args, nodeID)
	}
	q += ` ORDER BY task_id, attempt, device_pos`
	return queryAll(ctx, db, scanAllocation, q, args...)
}

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

// ListRetryable: see controlplane.SchedulingStore.
func (db *DB) ListRetryable(ctx context.Context, limit int) ([]*controlplane.Task, error) {
	limit = storeutil.ListLimit(limit)
	return queryAll(ctx, db, scanTask, `SELECT `+taskCols+` FROM tasks WHERE state IN ('failed', 'timed_out')
			AND attempt < max_retries AND NOT EXISTS (SELECT 1 FROM task_schedule s WHERE s.task_id = tasks.id AND s.final = 1)
			ORDER BY finished_at, id LIMIT ?`, limit)
}
