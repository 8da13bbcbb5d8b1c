package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// recordUsage writes a batch of records, adds the ones it inserted to both
// rollups and marks the intervals metered, all in one statement (arrays
// unnested; data-modifying CTEs that read what the insert returned): one
// round trip per batch and no explicit transaction. A record already
// stored is skipped by ON CONFLICT and never reaches a rollup, so a
// restarted meter or a second server writes nothing twice. The rollups'
// sums are the integer products storeutil.UsageDailyDeltas and
// UsageTaskDailyDeltas compute (SUM over bigint is exact numeric).
var recordUsage = `WITH ins AS (
	INSERT INTO usage_records (interval_id, day, start_at, end_at, duration_ms, task_id, attempt,
	node_id, device_pos, device_uuid, vendor, model, qos, tenant, project, owner_id, owner, memory_mib,
	compute_milli, share_milli, measured_ms, measured_compute_milli_ms, measured_memory_mib_ms)
	SELECT * FROM unnest($1::bigint[], $2::text[], $3::timestamptz[], $4::timestamptz[], $5::bigint[], $6::bigint[],
		$7::integer[], $8::text[], $9::integer[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[],
		$15::text[], $16::bigint[], $17::text[], $18::bigint[], $19::integer[], $20::integer[], $21::bigint[],
		$22::bigint[], $23::bigint[])
	ON CONFLICT (interval_id, day) DO NOTHING
	RETURNING interval_id, day, task_id, vendor, model, qos, tenant, project, owner, duration_ms, memory_mib,
		compute_milli, share_milli, measured_ms, measured_compute_milli_ms, measured_memory_mib_ms
), daily AS (
	` + storeutil.UsageDailyUpsert(`SELECT day, vendor, model, qos, tenant, project, owner, SUM(duration_ms),
		SUM(duration_ms * share_milli), SUM(duration_ms * memory_mib), SUM(duration_ms * compute_milli),
		SUM(measured_ms), SUM(measured_compute_milli_ms), SUM(measured_memory_mib_ms), SUM(measured_ms * compute_milli),
		SUM(measured_ms * memory_mib)
	FROM ins GROUP BY day, vendor, model, qos, tenant, project, owner`) + `
), task_daily AS (
	` + storeutil.UsageTaskDailyUpsert(`SELECT day, tenant, task_id, vendor, model, qos, SUM(duration_ms * share_milli),
		SUM(duration_ms * memory_mib), SUM(duration_ms * compute_milli)
	FROM ins GROUP BY day, tenant, task_id, vendor, model, qos`) + `
), metered AS (
	UPDATE allocation_history SET metered = TRUE WHERE id = ANY($24::bigint[]) AND NOT metered
)
SELECT interval_id, day FROM ins`

// RecordUsage: see controlplane.BillingStore.
func (db *DB) RecordUsage(ctx context.Context, recs []*controlplane.UsageRecord, metered []int64) ([]*controlplane.UsageRecord, error) {
	if len(recs) == 0 && len(metered) == 0 {
		return nil, nil
	}
	n := len(recs)
	var (
		ids, dur, task, owner, mem, mms, mcm, mmm = make([]int64, n), make([]int64, n), make([]int64, n),
			make([]*int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
		attempt, pos, compute, share                               = make([]int32, n), make([]int32, n), make([]int32, n), make([]int32, n)
		day, nodes, uuid, vendor, model, qos, tenant, proj, owners = make([]string, n), make([]string, n),
			make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n),
			make([]string, n), make([]string, n)
		start, end = make([]time.Time, n), make([]time.Time, n)
	)
	byKey := make(map[string]*controlplane.UsageRecord, n)
	for i, r := range recs {
		ids[i], day[i], start[i], end[i], dur[i], task[i] = r.IntervalID, r.Day.Format(controlplane.DateLayout),
			r.Start, r.End, r.DurationMS, r.TaskID
		attempt[i], nodes[i], pos[i], uuid[i], vendor[i], model[i] = int32(r.Attempt), r.NodeID, int32(r.DevicePos),
			r.DeviceUUID, r.Vendor, r.Model
		qos[i], tenant[i], proj[i], owner[i], owners[i], mem[i] = string(r.QoS), r.Tenant, r.Project, nullID(r.OwnerID),
			r.Owner, r.MemoryMiB
		compute[i], share[i], mms[i], mcm[i], mmm[i] = int32(r.ComputeMilli), int32(r.ShareMilli), r.Measured.MS,
			r.Measured.ComputeMilliMS, r.Measured.MemoryMiBMS
		if _, dup := byKey[usageKey(r.IntervalID, day[i])]; !dup {
			byKey[usageKey(r.IntervalID, day[i])] = r
		}
	}
	if metered == nil {
		metered = []int64{}
	}
	rows, err := db.pool.Query(ctx, recordUsage, ids, day, start, end, dur, task, attempt, nodes, pos, uuid, vendor,
		model, qos, tenant, proj, owner, owners, mem, compute, share, mms, mcm, mmm, metered)
	if err != nil {
		return nil, mapErr(err)
	}
	defer rows.Close()
	var inserted []*controlplane.UsageRecord
	for rows.Next() {
		var id int64
		var d string
		if err := rows.Scan(&id, &d); err != nil {
			return nil, mapErr(err)
		}
		if r := byKey[usageKey(id, d)]; r != nil {
			inserted = append(inserted, r)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, mapErr(err)
	}
	return inserted, nil
}

func usageKey(id int64, day string) string { return fmt.Sprintf("%d/%s", id, day) }

const usageCols = `interval_id, day, start_at, end_at, duration_ms, task_id, attempt, node_id, device_pos,
	device_uuid, vendor, model, qos, tenant, project, owner_id, owner, memory_mib, compute_milli, share_milli,
	measured_ms, measured_compute_milli_ms, measured_memory_mib_ms`

func scanUsage(row pgx.Row) (*controlplane.UsageRecord, error) {
	var r controlplane.UsageRecord
	var day string
	var owner *int64
	if err := row.Scan(&r.IntervalID, &day, &r.Start, &r.End, &r.DurationMS, &r.TaskID, &r.Attempt, &r.NodeID,
		&r.DevicePos, &r.DeviceUUID, &r.Vendor, &r.Model, &r.QoS, &r.Tenant, &r.Project, &owner, &r.Owner,
		&r.MemoryMiB, &r.ComputeMilli, &r.ShareMilli, &r.Measured.MS, &r.Measured.ComputeMilliMS,
		&r.Measured.MemoryMiBMS); err != nil {
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
	if f.IntervalIDs != nil {
		q += ` AND interval_id = ANY(` + a.add(f.IntervalIDs) + `)`
	}
	rows, err := db.pool.Query(ctx, q+` ORDER BY day, interval_id`, a...)
	return collect(rows, err, scanUsage)
}

func scanUsageSum(row pgx.Row) (*controlplane.UsageSum, error) {
	var s controlplane.UsageSum
	var day string
	var seg int32
	if err := row.Scan(&s.Set, &day, &seg, &s.Vendor, &s.Model, &s.QoS, &s.Tenant, &s.Project, &s.Owner, &s.TaskID,
		&s.SliceMS, &s.DeviceMilliMS, &s.MemoryMiBMS, &s.ComputeMilliMS, &s.Measured.MS, &s.Measured.ComputeMilliMS,
		&s.Measured.MemoryMiBMS, &s.CoveredComputeMilliMS, &s.CoveredMemoryMiBMS); err != nil {
		return nil, mapErr(err)
	}
	s.Segment = int(seg)
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
	q, a := storeutil.UsageSumQuery(true, req)
	var out []*controlplane.UsageSum
	err := db.tx(ctx, func(tx pgx.Tx) error {
		// A month of records ranks 100,000 tasks: let the grouping hash in
		// memory rather than sort on disk (this transaction only).
		if _, err := tx.Exec(ctx, `SET LOCAL work_mem = '64MB'`); err != nil {
			return mapErr(err)
		}
		rows, err := tx.Query(ctx, q, a...)
		out, err = collect(rows, err, scanUsageSum)
		return err
	})
	return out, err
}

// ListDeviceIntervals: see controlplane.UsageSumStore.
func (db *DB) ListDeviceIntervals(ctx context.Context, nodes []string, from, to time.Time) ([]*controlplane.AllocationInterval, error) {
	if len(nodes) == 0 {
		return nil, nil
	}
	rows, err := db.pool.Query(ctx, `SELECT `+intervalCols+`, a.owner_id, a.owner, a.released_at
		FROM allocation_history a WHERE a.node_id = ANY($1) AND a.released_at > $2 AND a.created_at < $3
		UNION ALL
		SELECT `+intervalCols+`, t.owner_id, COALESCE(t.owner, ''), NULL::timestamptz
		FROM allocations a LEFT JOIN tasks t ON t.id = a.task_id WHERE a.node_id = ANY($1) AND a.created_at < $3
		ORDER BY 1`, nodes, from, to)
	return collect(rows, err, scanInterval)
}
