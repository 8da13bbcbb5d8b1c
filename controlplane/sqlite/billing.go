package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

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

// RecordUsage: see controlplane.BillingStore.
func (db *DB) RecordUsage(ctx context.Context, recs []*controlplane.UsageRecord, metered []int64) ([]*controlplane.UsageRecord, error) {
	if len(recs) == 0 && len(metered) == 0 {
		return nil, nil
	}
	var inserted []*controlplane.UsageRecord
	err := db.write(ctx, func(tx *sql.Tx) error {
		inserted = inserted[:0]
		st, err := tx.PrepareContext(ctx, `INSERT INTO usage_records (interval_id, day, start_at, end_at, duration_ms,
			task_id, attempt, node_id, device_pos, device_uuid, vendor, model, qos, tenant, project, owner_id, owner,
			memory_mib, compute_milli, share_milli) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (interval_id, day) DO NOTHING`)
		if err != nil {
			return mapErr(err)
		}
		defer st.Close()
		for _, r := range recs {
			res, err := st.ExecContext(ctx, r.IntervalID, r.Day.Format(controlplane.DateLayout), ts(r.Start), ts(r.End),
				r.DurationMS, r.TaskID, r.Attempt, r.NodeID, r.DevicePos, r.DeviceUUID, r.Vendor, r.Model, string(r.QoS),
				r.Tenant, r.Project, nullID(r.OwnerID), r.Owner, r.MemoryMiB, r.ComputeMilli, r.ShareMilli)
			if err != nil {
				return mapErr(err)
			}
			if n, _ := res.RowsAffected(); n == 1 {
				inserted = append(inserted, r)
			}
		}
		for chunk := range chunks(metered, 500) {
			args := make([]any, len(chunk))
			for i, id := range chunk {
				args[i] = id
			}
			if _, err := tx.ExecContext(ctx, `UPDATE allocation_history SET metered = 1 WHERE id IN (?`+
				strings.Repeat(", ?", len(chunk)-1)+`)`, args...); err != nil {
				return mapErr(err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return inserted, nil
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

const usageCols = `interval_id, day, start_at, end_at, duration_ms, task_id, attempt, node_id, device_pos,
	device_uuid, vendor, model, qos, tenant, project, owner_id, owner, memory_mib, compute_milli, share_milli`

func scanUsage(row rowScanner) (*controlplane.UsageRecord, error) {
	var r controlplane.UsageRecord
	var day string
	var start, end int64
	var owner sql.NullInt64
	if err := row.Scan(&r.IntervalID, &day, &start, &end, &r.DurationMS, &r.TaskID, &r.Attempt, &r.NodeID,
		&r.DevicePos, &r.DeviceUUID, &r.Vendor, &r.Model, &r.QoS, &r.Tenant, &r.Project, &owner, &r.Owner,
		&r.MemoryMiB, &r.ComputeMilli, &r.ShareMilli); err != nil {
		return nil, mapErr(err)
	}
	r.OwnerID = owner.Int64
	var err error
	if r.Day, err = time.Parse(controlplane.DateLayout, day); err != nil {
		return nil, fmt.Errorf("usage record %d: bad day %q: %w", r.IntervalID, day, err)
	}
	r.Start, r.End = fromTS(start), fromTS(end)
	return &r, nil
}

// ListUsage: see controlplane.BillingStore.
func (db *DB) ListUsage(ctx context.Context, f controlplane.UsageFilter) ([]*controlplane.UsageRecord, error) {
	q := `SELECT ` + usageCols + ` FROM usage_records WHERE day >= ? AND day < ?`
	args := []any{f.From.UTC().Format(controlplane.DateLayout), f.To.UTC().Format(controlplane.DateLayout)}
	if f.Tenant != "" {
		q += ` AND tenant = ?`
		args = append(args, f.Tenant)
	}
	if f.Project != "" {
		q += ` AND project = ?`
		args = append(args, f.Project)
	}
	if f.OwnerID != 0 {
		q += ` AND owner_id = ?`
		args = append(args, f.OwnerID)
	}
	if f.TaskID != 0 {
		q += ` AND task_id = ?`
		args = append(args, f.TaskID)
	}
	return queryAll(ctx, db, scanUsage, q+` ORDER BY day, interval_id`, args...)
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
