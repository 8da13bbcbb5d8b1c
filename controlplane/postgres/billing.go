package postgres

import (
	"context"
	"fmt"
	"time"

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

// RecordUsage: see controlplane.BillingStore.
func (db *DB) RecordUsage(ctx context.Context, recs []*controlplane.UsageRecord, metered []int64) ([]*controlplane.UsageRecord, error) {
	var inserted []*controlplane.UsageRecord
	err := db.tx(ctx, func(tx pgx.Tx) error {
		inserted = inserted[:0]
		b := &pgx.Batch{}
		for _, r := range recs {
			b.Queue(`INSERT INTO usage_records (interval_id, day, start_at, end_at, duration_ms, task_id, attempt,
				node_id, device_pos, device_uuid, vendor, model, qos, tenant, project, owner_id, owner, memory_mib,
				compute_milli, share_milli) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15,
				$16, $17, $18, $19, $20) ON CONFLICT (interval_id, day) DO NOTHING`,
				r.IntervalID, r.Day.Format(controlplane.DateLayout), r.Start, r.End, r.DurationMS, r.TaskID, r.Attempt,
				r.NodeID, r.DevicePos, r.DeviceUUID, r.Vendor, r.Model, string(r.QoS), r.Tenant, r.Project,
				nullID(r.OwnerID), r.Owner, r.MemoryMiB, r.ComputeMilli, r.ShareMilli)
		}
		if len(metered) > 0 {
			b.Queue(`UPDATE allocation_history SET metered = TRUE WHERE id = ANY($1)`, metered)
		}
		if b.Len() == 0 {
			return nil
		}
		br := tx.SendBatch(ctx, b)
		for _, r := range recs {
			tag, err := br.Exec()
			if err != nil {
				_ = br.Close()
				return mapErr(err)
			}
			if tag.RowsAffected() == 1 {
				inserted = append(inserted, r)
			}
		}
		return mapErr(br.Close())
	})
	if err != nil {
		return nil, err
	}
	return inserted, nil
}

const usageCols = `interval_id, day, start_at, end_at, duration_ms, task_id, attempt, node_id, device_pos,
	device_uuid, vendor, model, qos, tenant, project, owner_id, owner, memory_mib, compute_milli, share_milli`

func scanUsage(row pgx.Row) (*controlplane.UsageRecord, error) {
	var r controlplane.UsageRecord
	var day string
	var owner *int64
	if err := row.Scan(&r.IntervalID, &day, &r.Start, &r.End, &r.DurationMS, &r.TaskID, &r.Attempt, &r.NodeID,
		&r.DevicePos, &r.DeviceUUID, &r.Vendor, &r.Model, &r.QoS, &r.Tenant, &r.Project, &owner, &r.Owner,
		&r.MemoryMiB, &r.ComputeMilli, &r.ShareMilli); err != nil {
		return nil, mapErr(err)
	}
	if owner != nil {
		r.OwnerID = *owner
	}
	var err error
	if r.Day, err = time.Parse(controlplane.DateLayout, day); err != nil {
		return nil, fmt.Errorf("usage record %d: bad day %q: %w", r.IntervalID, day, err)
	}
	r.Start, r.End = utc(r.Start), utc(r.End)
	return &r, nil
}

// ListUsage: see controlplane.BillingStore.
func (db *DB) ListUsage(ctx context.Context, f controlplane.UsageFilter) ([]*controlplane.UsageRecord, error) {
	var a args
	q := `SELECT ` + usageCols + ` FROM usage_records WHERE day >= ` + a.add(f.From.UTC().Format(controlplane.DateLayout)) +
		` AND day < ` + a.add(f.To.UTC().Format(controlplane.DateLayout))
	if f.Tenant != "" {
		q += ` AND tenant = ` + a.add(f.Tenant)
	}
	if f.Project != "" {
		q += ` AND project = ` + a.add(f.Project)
	}
	if f.OwnerID != 0 {
		q += ` AND owner_id = ` + a.add(f.OwnerID)
	}
	if f.TaskID != 0 {
		q += ` AND task_id = ` + a.add(f.TaskID)
	}
	rows, err := db.pool.Query(ctx, q+` ORDER BY day, interval_id`, a...)
	return collect(rows, err, scanUsage)
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
