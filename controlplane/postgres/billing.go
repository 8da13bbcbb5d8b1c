package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

var _ controlplane.BillingStore = (*DB)(nil)

const intervalCols = `a.id, a.task_id, a.attempt, a.node_id, a.device_pos, a.device_index, a.device_uuid, a.vendor,
	a.model, a.memory_mib, a.compute_milli, a.qos, a.isolation, a.profile, a.part_start, a.cpu_milli,
	a.host_memory_mib, a.tenant, a.project, a.priority, a.draining, a.created_at`

func scanInterval(row pgx.Row) (*controlplane.AllocationInterval, error) {
	var iv controlplane.AllocationInterval
	a := &iv.Allocation
	var owner *int64
	if err := row.Scan(&a.ID, &a.TaskID, &a.Attempt, &a.NodeID, &a.DevicePos, &a.DeviceIndex, &a.DeviceUUID,
		&a.Vendor, &a.Model, &a.MemoryMiB, &a.ComputeMilli, &a.QoS, &a.Isolation, &a.Profile, &a.PartStart,
		&a.CPUMilli, &a.HostMemoryMiB, &a.Tenant, &a.Project, &a.Priority, &a.Draining, &a.CreatedAt,
		&owner, &iv.Owner, &iv.ReleasedAt); err != nil {
		return nil, mapErr(err)
	}
	if owner != nil {
		iv.OwnerID = *owner
	}
	a.CreatedAt = utc(a.CreatedAt)
	iv.ReleasedAt = utcPtr(iv.ReleasedAt)
	return &iv, nil
}

// ListUnmeteredIntervals: see controlplane.BillingStore.
func (db *DB) ListUnmeteredIntervals(ctx context.Context, limit int) ([]*controlplane.AllocationInterval, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+intervalCols+`, a.owner_id, a.owner, a.released_at
		FROM allocation_history a WHERE NOT a.metered ORDER BY a.released_at, a.id LIMIT $1`, storeutil.ListLimit(limit))
	return collect(rows, err, scanInterval)
}

// ListOpenIntervals: see controlplane.BillingStore.
func (db *DB) ListOpenIntervals(ctx context.Context) ([]*controlplane.AllocationInterval, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+intervalCols+`, t.owner_id, COALESCE(t.owner, ''), NULL::timestamptz
		FROM allocations a LEFT JOIN tasks t ON t.id = a.task_id ORDER BY a.id`)
	return collect(rows, err, scanInterval)
}

// TenantKnown: see controlplane.BillingStore.
func (db *DB) TenantKnown(ctx context.Context, tenant string) (bool, error) {
	var ok bool
	err := db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM users WHERE tenant = $1)
		OR EXISTS (SELECT 1 FROM tasks WHERE tenant = $1) OR EXISTS (SELECT 1 FROM quotas WHERE tenant = $1)
		OR EXISTS (SELECT 1 FROM usage_records WHERE tenant = $1) OR EXISTS (SELECT 1 FROM budgets WHERE tenant = $1)`,
		tenant).Scan(&ok)
	return ok, mapErr(err)
}
