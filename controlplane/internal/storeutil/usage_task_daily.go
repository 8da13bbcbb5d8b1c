package storeutil

import "github.com/heteroflow/heteroflow/controlplane"

// The per-task daily rollup (usage_task_daily) ranks the heaviest tasks of
// a report: per day, task, class and tenant, the weighted quantities the
// price book applies (Σ duration × share, × memory, × compute). A month of
// records ranks from one narrow row per task and day; the chosen tasks'
// exact sums, measured usage included, still come from the records through
// the task index. The store adds to it in the transaction that inserts the
// records, from the records that transaction inserted, so it is exactly
// their sum and a record written twice (a restarted meter, a second
// server) adds nothing.

// taskRollupCols are the columns base selects from usage_task_daily.
const taskRollupCols = `day, vendor, model, qos, tenant, task_id, device_milli_ms, memory_mib_ms, compute_milli_ms`

// UsageTaskDaily is one row of the per-task daily rollup.
type UsageTaskDaily struct {
	Day, Tenant                                string
	TaskID                                     int64
	Vendor, Model, QoS                         string
	DeviceMilliMS, MemoryMiBMS, ComputeMilliMS int64
}

// UsageTaskDailyDeltas sums newly inserted records into per-task rollup
// rows (the store adds them to usage_task_daily in the same transaction).
func UsageTaskDailyDeltas(recs []*controlplane.UsageRecord) []*UsageTaskDaily {
	type key struct {
		day, tenant        string
		task               int64
		vendor, model, qos string
	}
	rows := map[key]*UsageTaskDaily{}
	var out []*UsageTaskDaily
	for _, r := range recs {
		k := key{r.Day.Format(controlplane.DateLayout), r.Tenant, r.TaskID, r.Vendor, r.Model, string(r.QoS)}
		d := rows[k]
		if d == nil {
			d = &UsageTaskDaily{Day: k.day, Tenant: k.tenant, TaskID: k.task, Vendor: k.vendor, Model: k.model, QoS: k.qos}
			rows[k] = d
			out = append(out, d)
		}
		d.DeviceMilliMS += r.DurationMS * int64(r.ShareMilli)
		d.MemoryMiBMS += r.DurationMS * r.MemoryMiB
		d.ComputeMilliMS += r.DurationMS * int64(r.ComputeMilli)
	}
	return out
}

// UsageTaskDailyUpsert adds rollup rows (placeholders in UsageTaskDaily's
// field order).
func UsageTaskDailyUpsert(values string) string {
	return `INSERT INTO usage_task_daily (day, tenant, task_id, vendor, model, qos, device_milli_ms, memory_mib_ms,
	compute_milli_ms) ` + values + `
	ON CONFLICT (day, task_id, vendor, model, qos, tenant) DO UPDATE SET
		device_milli_ms = usage_task_daily.device_milli_ms + excluded.device_milli_ms,
		memory_mib_ms = usage_task_daily.memory_mib_ms + excluded.memory_mib_ms,
		compute_milli_ms = usage_task_daily.compute_milli_ms + excluded.compute_milli_ms`
}

// heavyTasks is the query of the top task ids by the weights of rates (a
// subquery of seg, vendor, model, qos, dr, mr, cr) at the given limit
// placeholder: from the per-task rollup unless the filter names a project
// or an owner (which it does not keep), then from the records. Weights are
// floating point: they only choose the tasks, whose exact sums follow.
func (u *usageSQL) heavyTasks(rates, limit func() string) string {
	f := u.req.Filter
	if f.Project != "" || f.OwnerID != 0 {
		inner := u.base("usage_records", recordCols, "h")
		return `SELECT h.task_id FROM ` + inner + ` LEFT JOIN (` + rates() + `) p ON p.seg = h.seg
		AND p.vendor = h.vendor AND p.model = h.model AND p.qos = h.qos GROUP BY h.task_id
		ORDER BY SUM(CAST(h.duration_ms AS DOUBLE PRECISION) * (h.share_milli * COALESCE(p.dr, 0) +
			h.memory_mib * COALESCE(p.mr, 0) + h.compute_milli * COALESCE(p.cr, 0))) DESC,
			SUM(CAST(h.duration_ms AS DOUBLE PRECISION) * h.share_milli) DESC, h.task_id LIMIT ` + limit()
	}
	inner := u.base("usage_task_daily", taskRollupCols, "h")
	return `SELECT h.task_id FROM ` + inner + ` LEFT JOIN (` + rates() + `) p ON p.seg = h.seg
		AND p.vendor = h.vendor AND p.model = h.model AND p.qos = h.qos GROUP BY h.task_id
		ORDER BY SUM(CAST(h.device_milli_ms AS DOUBLE PRECISION) * COALESCE(p.dr, 0) +
			CAST(h.memory_mib_ms AS DOUBLE PRECISION) * COALESCE(p.mr, 0) +
			CAST(h.compute_milli_ms AS DOUBLE PRECISION) * COALESCE(p.cr, 0)) DESC,
			SUM(CAST(h.device_milli_ms AS DOUBLE PRECISION)) DESC, h.task_id LIMIT ` + limit()
}
