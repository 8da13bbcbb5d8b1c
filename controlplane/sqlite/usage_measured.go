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
			memory_mib, compute_milli, share_milli, measured_ms, measured_compute_milli_ms, measured_memory_mib_ms)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (interval_id, day) DO NOTHING`)
		if err != nil {
			return mapErr(err)
		}
		defer st.Close()
		for _, r := range recs {
			res, err := st.ExecContext(ctx, r.IntervalID, r.Day.Format(controlplane.DateLayout), ts(r.Start), ts(r.End),
				r.DurationMS, r.TaskID, r.Attempt, r.NodeID, r.DevicePos, r.DeviceUUID, r.Vendor, r.Model, string(r.QoS),
				r.Tenant, r.Project, nullID(r.OwnerID), r.Owner, r.MemoryMiB, r.ComputeMilli, r.ShareMilli,
				r.Measured.MS, r.Measured.ComputeMilliMS, r.Measured.MemoryMiBMS)
			if err != nil {
				return mapErr(err)
			}
			if n, _ := res.RowsAffected(); n == 1 {
				inserted = append(inserted, r)
			}
		}
		daily, err := tx.PrepareContext(ctx, storeutil.UsageDailyUpsert(`VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`))
		if err != nil {
			return mapErr(err)
		}
		defer daily.Close()
		for _, d := range storeutil.UsageDailyDeltas(inserted) {
			if _, err := daily.ExecContext(ctx, d.Day, d.Vendor, d.Model, d.QoS, d.Tenant, d.Project, d.Owner, d.SliceMS,
				d.DeviceMilliMS, d.MemoryMiBMS, d.ComputeMilliMS, d.MeasuredMS, d.MeasuredComputeMilliMS,
				d.MeasuredMemoryMiBMS, d.CoveredComputeMilliMS, d.CoveredMemoryMiBMS); err != nil {
				return mapErr(err)
			}
		}
		if err := addTaskDaily(ctx, tx, inserted); err != nil {
			return err
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

const usageCols = `interval_id, day, start_at, end_at, duration_ms, task_id, attempt, node_id, device_pos,
	device_uuid, vendor, model, qos, tenant, project, owner_id, owner, memory_mib, compute_milli, share_milli,
	measured_ms, measured_compute_milli_ms, measured_memory_mib_ms`

func scanUsage(row rowScanner) (*controlplane.UsageRecord, error) {
	var r controlplane.UsageRecord
	var day string
	var start, end int64
	var owner sql.NullInt64
	if err := row.Scan(&r.IntervalID, &day, &start, &end, &r.DurationMS, &r.TaskID, &r.Attempt, &r.NodeID,
		&r.DevicePos, &r.DeviceUUID, &r.Vendor, &r.Model, &r.QoS, &r.Tenant, &r.Project, &owner, &r.Owner,
		&r.MemoryMiB, &r.ComputeMilli, &r.ShareMilli, &r.Measured.MS, &r.Measured.ComputeMilliMS,
		&r.Measured.MemoryMiBMS); err != nil {
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
	if f.IntervalIDs != nil {
		if len(f.IntervalIDs) == 0 {
			return nil, nil
		}
		var out []*controlplane.UsageRecord
		for chunk := range chunks(f.IntervalIDs, 500) {
			ids := make([]any, len(chunk))
			for i, id := range chunk {
				ids[i] = id
			}
			recs, err := queryAll(ctx, db, scanUsage, q+` AND interval_id IN (?`+strings.Repeat(", ?", len(chunk)-1)+
				`) ORDER BY day, interval_id`, append(append([]any{}, args...), ids...)...)
			if err != nil {
				return nil, err
			}
			out = append(out, recs...)
		}
		return out, nil
	}
	return queryAll(ctx, db, scanUsage, q+` ORDER BY day, interval_id`, args...)
}

func scanUsageSum(row rowScanner) (*controlplane.UsageSum, error) {
	var s controlplane.UsageSum
	var day string
	if err := row.Scan(&s.Set, &day, &s.Segment, &s.Vendor, &s.Model, &s.QoS, &s.Tenant, &s.Project, &s.Owner, &s.TaskID,
		&s.SliceMS, &s.DeviceMilliMS, &s.MemoryMiBMS, &s.ComputeMilliMS, &s.Measured.MS, &s.Measured.ComputeMilliMS,
		&s.Measured.MemoryMiBMS, &s.CoveredComputeMilliMS, &s.CoveredMemoryMiBMS); err != nil {
		return nil, mapErr(err)
	}
	if day != "" {
		var err error
		if s.Day, err = time.Parse(controlplane.DateLayout, day); err != nil {
			return nil, fmt.Errorf("usage sum: bad day %q: %w", day, err)
		}
	}
	return &s, nil
}

// SumUsage: see controlplane.UsageSumStore.
func (db *DB) SumUsage(ctx context.Context, req controlplane.UsageSumRequest) ([]*controlplane.UsageSum, error) {
	q, args := storeutil.UsageSumQuery(false, req)
	return queryAll(ctx, db, scanUsageSum, q, args...)
}

// ListDeviceIntervals: see controlplane.UsageSumStore.
func (db *DB) ListDeviceIntervals(ctx context.Context, nodes []string, from, to time.Time) ([]*controlplane.AllocationInterval, error) {
	if len(nodes) == 0 {
		return nil, nil
	}
	var out []*controlplane.AllocationInterval
	for i := 0; i < len(nodes); i += 400 {
		chunk := nodes[i:min(i+400, len(nodes))]
		in := "?" + strings.Repeat(", ?", len(chunk)-1)
		args := make([]any, 0, 2*len(chunk)+2)
		for _, n := range chunk {
			args = append(args, n)
		}
		args = append(args, ts(from), ts(to))
		for _, n := range chunk {
			args = append(args, n)
		}
		args = append(args, ts(to))
		ivs, err := queryAll(ctx, db, scanInterval, `SELECT `+intervalCols+`, a.owner_id, a.owner, a.released_at
			FROM allocation_history a WHERE a.node_id IN (`+in+`) AND a.released_at > ? AND a.created_at < ?
			UNION ALL
			SELECT `+intervalCols+`, t.owner_id, COALESCE(t.owner, ''), NULL
			FROM allocations a LEFT JOIN tasks t ON t.id = a.task_id WHERE a.node_id IN (`+in+`) AND a.created_at < ?
			ORDER BY 1`, args...)
		if err != nil {
			return nil, err
		}
		out = append(out, ivs...)
	}
	return out, nil
}
