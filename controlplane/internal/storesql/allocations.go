package storesql

import (
	"context"
	"fmt"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// The allocation ledger's rows. Binding and releasing stay in each store:
// they ride on the store's task transition, and PostgreSQL moves released
// rows to the history in one data-modifying statement.

const allocCols = `id, task_id, attempt, node_id, device_pos, device_index, device_uuid, vendor, model,
	memory_mib, compute_milli, qos, isolation, profile, part_start, cpu_milli, host_memory_mib,
	tenant, project, priority, draining, created_at`

func (q Queries) scanAllocation(row Row) (*controlplane.Allocation, error) {
	var a controlplane.Allocation
	if err := row.Scan(&a.ID, &a.TaskID, &a.Attempt, &a.NodeID, &a.DevicePos, &a.DeviceIndex, &a.DeviceUUID,
		&a.Vendor, &a.Model, &a.MemoryMiB, &a.ComputeMilli, &a.QoS, &a.Isolation, &a.Profile, &a.PartStart,
		&a.CPUMilli, &a.HostMemoryMiB, &a.Tenant, &a.Project, &a.Priority, &a.Draining, q.db.ScanTime(&a.CreatedAt)); err != nil {
		return nil, err
	}
	return &a, nil
}

// InsertAllocation writes one ledger row of a binding (TaskID, Attempt and
// CreatedAt set by the caller) on c and sets its ID.
func InsertAllocation(ctx context.Context, d Dialect, c Conn, a *controlplane.Allocation) error {
	if err := c.QueryRow(ctx, `INSERT INTO allocations (task_id, attempt, node_id, device_pos,
		device_index, device_uuid, vendor, model, memory_mib, compute_milli, qos, isolation, profile,
		part_start, cpu_milli, host_memory_mib, tenant, project, priority, draining, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, FALSE, $20)
		RETURNING id`,
		a.TaskID, a.Attempt, a.NodeID, a.DevicePos, a.DeviceIndex, a.DeviceUUID, a.Vendor, a.Model,
		a.MemoryMiB, a.ComputeMilli, string(a.QoS), a.Isolation, a.Profile, a.PartStart, a.CPUMilli,
		a.HostMemoryMiB, a.Tenant, a.Project, a.Priority, d.Time(a.CreatedAt)).Scan(&a.ID); err != nil {
		return fmt.Errorf("insert allocation of task %d: %w", a.TaskID, err)
	}
	return nil
}

// ListAllocations: see controlplane.SchedulingStore.
func (q Queries) ListAllocations(ctx context.Context, nodeID string) ([]*controlplane.Allocation, error) {
	query := `SELECT ` + allocCols + ` FROM allocations`
	a := q.args()
	if nodeID != "" {
		query += ` WHERE node_id = ` + a.Add(nodeID)
	}
	return all(ctx, q.db.Reader(), q.scanAllocation, query+` ORDER BY task_id, attempt, device_pos`, a.Vals...)
}

// IntervalCols are the allocation columns ScanInterval reads (table alias
// a), before the owner id, owner name and release time.
const IntervalCols = `a.id, a.task_id, a.attempt, a.node_id, a.device_pos, a.device_index, a.device_uuid, a.vendor,
	a.model, a.memory_mib, a.compute_milli, a.qos, a.isolation, a.profile, a.part_start, a.cpu_milli,
	a.host_memory_mib, a.tenant, a.project, a.priority, a.draining, a.created_at`

// ScanInterval reads IntervalCols followed by owner id, owner and release
// time (NULL while the allocation is held).
func ScanInterval(d Dialect, row Row) (*controlplane.AllocationInterval, error) {
	var iv controlplane.AllocationInterval
	a := &iv.Allocation
	var owner *int64
	if err := row.Scan(&a.ID, &a.TaskID, &a.Attempt, &a.NodeID, &a.DevicePos, &a.DeviceIndex, &a.DeviceUUID,
		&a.Vendor, &a.Model, &a.MemoryMiB, &a.ComputeMilli, &a.QoS, &a.Isolation, &a.Profile, &a.PartStart,
		&a.CPUMilli, &a.HostMemoryMiB, &a.Tenant, &a.Project, &a.Priority, &a.Draining, d.ScanTime(&a.CreatedAt),
		&owner, &iv.Owner, d.ScanNullTime(&iv.ReleasedAt)); err != nil {
		return nil, err
	}
	if owner != nil {
		iv.OwnerID = *owner
	}
	return &iv, nil
}

func (q Queries) scanInterval(row Row) (*controlplane.AllocationInterval, error) {
	return ScanInterval(q.db, row)
}

// ListUnmeteredIntervals: see controlplane.BillingStore.
func (q Queries) ListUnmeteredIntervals(ctx context.Context, limit int) ([]*controlplane.AllocationInterval, error) {
	return all(ctx, q.db.Reader(), q.scanInterval, `SELECT `+IntervalCols+`, a.owner_id, a.owner, a.released_at
		FROM allocation_history a WHERE NOT a.metered ORDER BY a.released_at, a.id LIMIT $1`, storeutil.ListLimit(limit))
}

// ListOpenIntervals: see controlplane.BillingStore.
func (q Queries) ListOpenIntervals(ctx context.Context) ([]*controlplane.AllocationInterval, error) {
	return all(ctx, q.db.Reader(), q.scanInterval, `SELECT `+IntervalCols+`, t.owner_id, COALESCE(t.owner, ''),
		CAST(NULL AS TIMESTAMPTZ) FROM allocations a LEFT JOIN tasks t ON t.id = a.task_id ORDER BY a.id`)
}
