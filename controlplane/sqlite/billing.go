package sqlite

import (
	"context"
	"database/sql"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

var _ controlplane.BillingStore = (*DB)(nil)

const intervalCols = `a.id, a.task_id, a.attempt, a.node_id, a.device_pos, a.device_index, a.device_uuid, a.vendor,
	a.model, a.memory_mib, a.compute_milli, a.qos, a.isolation, a.profile, a.part_start, a.cpu_milli,
	a.host_memory_mib, a.tenant, a.project, a.priority, a.draining, a.created_at`

func scanInterval(row rowScanner) (*controlplane.AllocationInterval, error) {
	var iv controlplane.AllocationInterval
	a := &iv.Allocation
	var created int64
	var owner, released sql.NullInt64
	if err := row.Scan(&a.ID, &a.TaskID, &a.Attempt, &a.NodeID, &a.DevicePos, &a.DeviceIndex, &a.DeviceUUID,
		&a.Vendor, &a.Model, &a.MemoryMiB, &a.ComputeMilli, &a.QoS, &a.Isolation, &a.Profile, &a.PartStart,
		&a.CPUMilli, &a.HostMemoryMiB, &a.Tenant, &a.Project, &a.Priority, &a.Draining, &created,
		&owner, &iv.Owner, &released); err != nil {
		return nil, mapErr(err)
	}
	iv.OwnerID = owner.Int64
	a.CreatedAt = fromTS(created)
	iv.ReleasedAt = fromNullTS(released)
	return &iv, nil
}

// ListUnmeteredIntervals: see controlplane.BillingStore.
func (db *DB) ListUnmeteredIntervals(ctx context.Context, limit int) ([]*controlplane.AllocationInterval, error) {
	return queryAll(ctx, db, scanInterval, `SELECT `+intervalCols+`, a.owner_id, a.owner, a.released_at
		FROM allocation_history a WHERE a.metered = 0 ORDER BY a.released_at, a.id LIMIT ?`, storeutil.ListLimit(limit))
}

// ListOpenIntervals: see controlplane.BillingStore.
func (db *DB) ListOpenIntervals(ctx context.Context) ([]*controlplane.AllocationInterval, error) {
	return queryAll(ctx, db, scanInterval, `SELECT `+intervalCols+`, t.owner_id, COALESCE(t.owner, ''), NULL
		FROM allocations a LEFT JOIN tasks t ON t.id = a.task_id ORDER BY a.id`)
}

// chunks yields s in slices of at most n (SQLite bounds a statement's
// parameters).
func chunks(s []int64, n int) func(func([]int64) bool) {
	return func(yield func([]int64) bool) {
		for len(s) > 0 {
			k := min(n, len(s))
			if !yield(s[:k]) {
				return
			}
			s = s[k:]
		}
	}
}

// TenantKnown: see controlplane.BillingStore.
func (db *DB) TenantKnown(ctx context.Context, tenant string) (bool, error) {
	var ok bool
	err := db.r.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM users WHERE tenant = ?1)
		OR EXISTS (SELECT 1 FROM tasks WHERE tenant = ?1) OR EXISTS (SELECT 1 FROM quotas WHERE tenant = ?1)
		OR EXISTS (SELECT 1 FROM usage_records WHERE tenant = ?1) OR EXISTS (SELECT 1 FROM budgets WHERE tenant = ?1)`,
		tenant).Scan(&ok)
	return ok, mapErr(err)
}
