package storeutil

import (
	"strconv"
	"strings"

	"github.com/heteroflow/heteroflow/controlplane"
)

// recordSums are the summed quantities of a group of usage records, exact
// integers.
const recordSums = `CAST(SUM(duration_ms) AS BIGINT), CAST(SUM(duration_ms * share_milli) AS BIGINT),
	CAST(SUM(duration_ms * memory_mib) AS BIGINT), CAST(SUM(duration_ms * compute_milli) AS BIGINT),
	CAST(SUM(measured_ms) AS BIGINT), CAST(SUM(measured_compute_milli_ms) AS BIGINT),
	CAST(SUM(measured_memory_mib_ms) AS BIGINT), CAST(SUM(measured_ms * compute_milli) AS BIGINT),
	CAST(SUM(measured_ms * memory_mib) AS BIGINT)`

// rollupSums are the same sums over usage_daily rows.
const rollupSums = `CAST(SUM(slice_ms) AS BIGINT), CAST(SUM(device_milli_ms) AS BIGINT),
	CAST(SUM(memory_mib_ms) AS BIGINT), CAST(SUM(compute_milli_ms) AS BIGINT),
	CAST(SUM(measured_ms) AS BIGINT), CAST(SUM(measured_compute_milli_ms) AS BIGINT),
	CAST(SUM(measured_memory_mib_ms) AS BIGINT), CAST(SUM(covered_compute_milli_ms) AS BIGINT),
	CAST(SUM(covered_memory_mib_ms) AS BIGINT)`

const recordCols = `day, vendor, model, qos, tenant, project, owner, task_id, duration_ms, share_milli, memory_mib,
	compute_milli, measured_ms, measured_compute_milli_ms, measured_memory_mib_ms`

const rollupCols = `day, vendor, model, qos, tenant, project, owner, slice_ms, device_milli_ms, memory_mib_ms,
	compute_milli_ms, measured_ms, measured_compute_milli_ms, measured_memory_mib_ms, covered_compute_milli_ms,
	covered_memory_mib_ms`

// maxListedTasks bounds the task ids a query names one by one; past it
// every task's rows are returned.
const maxListedTasks = 5000

type usageSQL struct {
	a   *Args
	req controlplane.UsageSumRequest
}

// base is the filtered rows of table with their price segment, as a
// subquery named alias. It adds its arguments each time (SQLite's
// placeholders are positional).
func (u *usageSQL) base(table, cols, alias string) string {
	f := u.req.Filter
	seg := "0"
	if len(u.req.Cuts) > 0 {
		var b strings.Builder
		b.WriteString("CASE")
		for i, c := range u.req.Cuts {
			b.WriteString(" WHEN day < " + u.a.Add(c.UTC().Format(controlplane.DateLayout)) + " THEN " + strconv.Itoa(i))
		}
		b.WriteString(" ELSE " + strconv.Itoa(len(u.req.Cuts)) + " END")
		seg = b.String()
	}
	where := "day >= " + u.a.Add(f.From.UTC().Format(controlplane.DateLayout)) +
		" AND day < " + u.a.Add(f.To.UTC().Format(controlplane.DateLayout))
	if f.Tenant != "" {
		where += " AND tenant = " + u.a.Add(f.Tenant)
	}
	if f.Project != "" {
		where += " AND project = " + u.a.Add(f.Project)
	}
	if f.OwnerID != 0 {
		where += " AND owner_id = " + u.a.Add(f.OwnerID)
	}
	if f.TaskID != 0 {
		where += " AND task_id = " + u.a.Add(f.TaskID)
	}
	return `(SELECT ` + seg + ` AS seg, ` + cols + ` FROM ` + table + ` WHERE ` + where + `) ` + alias
}

// scopes sums the daily, tenant, project and user sets: from the daily
// rollup unless the filter names an owner or a task (which the rollup does
// not keep); on PostgreSQL in one scan (grouping sets, hashed).
func (u *usageSQL) scopes() string {
	table, cols, sums := "usage_daily", rollupCols, rollupSums
	if u.req.Filter.OwnerID != 0 || u.req.Filter.TaskID != 0 {
		table, cols, sums = "usage_records", recordCols, recordSums
	}
	if u.a.Numbered {
		g := `GROUPING(day, seg, tenant, project, owner)`
		return `SELECT CASE ` + g + ` WHEN 15 THEN 'daily' WHEN 19 THEN 'tenant' WHEN 17 THEN 'project' ELSE 'user' END,
			CASE WHEN ` + g + ` = 15 THEN day ELSE '' END, CASE WHEN ` + g + ` = 15 THEN 0 ELSE seg END, vendor, model, qos,
			CASE ` + g + ` WHEN 15 THEN '' WHEN 22 THEN MIN(tenant) ELSE tenant END, COALESCE(project, ''),
			COALESCE(owner, ''), 0, ` + sums + ` FROM ` + u.base(table, cols, "r") + `
			GROUP BY GROUPING SETS ((day, vendor, model, qos), (seg, vendor, model, qos, tenant),
				(seg, vendor, model, qos, tenant, project), (seg, vendor, model, qos, owner))`
	}
	parts := []string{
		`SELECT 'daily', day, 0, vendor, model, qos, '', '', '', 0, ` + sums + ` FROM ` + u.base(table, cols, "r") +
			` GROUP BY day, vendor, model, qos`,
		`SELECT 'tenant', '', seg, vendor, model, qos, tenant, '', '', 0, ` + sums + ` FROM ` + u.base(table, cols, "r") +
			` GROUP BY seg, vendor, model, qos, tenant`,
		`SELECT 'project', '', seg, vendor, model, qos, tenant, project, '', 0, ` + sums + ` FROM ` + u.base(table, cols, "r") +
			` GROUP BY seg, vendor, model, qos, tenant, project`,
		`SELECT 'user', '', seg, vendor, model, qos, MIN(tenant), '', owner, 0, ` + sums + ` FROM ` + u.base(table, cols, "r") +
			` GROUP BY seg, vendor, model, qos, owner`,
	}
	return strings.Join(parts, "\nUNION ALL\n")
}

// tasks is the rows of the heaviest tasks (by req.Rates) and of req.Tasks.
func (u *usageSQL) tasks() string {
	outer := u.base("usage_records", recordCols, "r")
	// Built when heavyTasks places it: SQLite's placeholders are positional.
	rates := func() string {
		var rates strings.Builder
		for i, r := range u.req.Rates {
			if i > 0 {
				rates.WriteString(" UNION ALL ")
			}
			rates.WriteString("SELECT CAST(" + u.a.Add(r.Segment) + " AS INTEGER) AS seg, CAST(" + u.a.Add(r.Vendor) +
				" AS TEXT) AS vendor, CAST(" + u.a.Add(r.Model) + " AS TEXT) AS model, CAST(" + u.a.Add(string(r.QoS)) +
				" AS TEXT) AS qos, CAST(" + u.a.Add(r.DeviceMilliMS) + " AS DOUBLE PRECISION) AS dr, CAST(" +
				u.a.Add(r.MemoryMiBMS) + " AS DOUBLE PRECISION) AS mr, CAST(" + u.a.Add(r.ComputeMilliMS) + " AS DOUBLE PRECISION) AS cr")
		}
		if len(u.req.Rates) == 0 {
			rates.WriteString("SELECT 0 AS seg, '' AS vendor, '' AS model, '' AS qos, 0.0 AS dr, 0.0 AS mr, 0.0 AS cr WHERE 1 = 0")
		}
		return rates.String()
	}
	top := u.req.Top
	if top <= 0 {
		top = 20
	}
	heavy := u.heavyTasks(rates, func() string { return u.a.Add(top) })
	cond := "task_id IN (" + heavy + ")"
	switch {
	case len(u.req.Tasks) > maxListedTasks:
		cond = "1 = 1"
	case len(u.req.Tasks) > 0:
		ph := make([]string, len(u.req.Tasks))
		for i, id := range u.req.Tasks {
			ph[i] = u.a.Add(id)
		}
		cond += " OR task_id IN (" + strings.Join(ph, ", ") + ")"
	}
	return `SELECT 'task', '', seg, vendor, model, qos, MIN(tenant), MIN(project), MIN(owner), task_id, ` + recordSums +
		` FROM ` + outer + ` WHERE ` + cond + ` GROUP BY seg, vendor, model, qos, task_id`
}

// UsageSumQuery is the SQL of controlplane.UsageSumStore.SumUsage for both
// dialects (rows in controlplane.UsageSum's field order): the filtered
// usage (with its price segment) summed by day and class and by segment,
// class and tenant / project / owner, then the rows of the heaviest tasks
// (weighted by req.Rates) and of req.Tasks.
func UsageSumQuery(numbered bool, req controlplane.UsageSumRequest) (string, []any) {
	u := &usageSQL{a: &Args{Numbered: numbered}, req: req}
	var q string
	switch {
	case req.TasksOnly:
		q = u.tasks()
	case req.SkipTasks:
		q = u.scopes()
	default:
		q = u.scopes()
		q += "\nUNION ALL\n" + u.tasks()
	}
	return q, u.a.Vals
}

// UsageDaily is one row of the daily rollup (usage_daily): the sums of the
// usage records of one day, class, tenant, project and owner.
type UsageDaily struct {
	Day                                         string
	Vendor, Model, QoS, Tenant, Project, Owner  string
	SliceMS, DeviceMilliMS, MemoryMiBMS         int64
	ComputeMilliMS, MeasuredMS                  int64
	MeasuredComputeMilliMS, MeasuredMemoryMiBMS int64
	CoveredComputeMilliMS, CoveredMemoryMiBMS   int64
}

// UsageDailyDeltas sums newly inserted records into rollup rows, which the
// store adds to usage_daily in the transaction that inserted them (so the
// rollup is exactly the sum of the records, and a record already stored
// adds nothing).
func UsageDailyDeltas(recs []*controlplane.UsageRecord) []*UsageDaily {
	type key struct{ day, vendor, model, qos, tenant, project, owner string }
	rows := map[key]*UsageDaily{}
	var out []*UsageDaily
	for _, r := range recs {
		k := key{r.Day.Format(controlplane.DateLayout), r.Vendor, r.Model, string(r.QoS), r.Tenant, r.Project, r.Owner}
		d := rows[k]
		if d == nil {
			d = &UsageDaily{Day: k.day, Vendor: k.vendor, Model: k.model, QoS: k.qos, Tenant: k.tenant, Project: k.project, Owner: k.owner}
			rows[k] = d
			out = append(out, d)
		}
		d.SliceMS += r.DurationMS
		d.DeviceMilliMS += r.DurationMS * int64(r.ShareMilli)
		d.MemoryMiBMS += r.DurationMS * r.MemoryMiB
		d.ComputeMilliMS += r.DurationMS * int64(r.ComputeMilli)
		d.MeasuredMS += r.Measured.MS
		d.MeasuredComputeMilliMS += r.Measured.ComputeMilliMS
		d.MeasuredMemoryMiBMS += r.Measured.MemoryMiBMS
		d.CoveredComputeMilliMS += r.Measured.MS * int64(r.ComputeMilli)
		d.CoveredMemoryMiBMS += r.Measured.MS * r.MemoryMiB
	}
	return out
}

// UsageDailyUpsert adds one rollup row (placeholders in UsageDaily's order).
func UsageDailyUpsert(values string) string {
	return `INSERT INTO usage_daily (` + rollupCols + `) ` + values + `
	ON CONFLICT (day, vendor, model, qos, tenant, project, owner) DO UPDATE SET
		slice_ms = usage_daily.slice_ms + excluded.slice_ms,
		device_milli_ms = usage_daily.device_milli_ms + excluded.device_milli_ms,
		memory_mib_ms = usage_daily.memory_mib_ms + excluded.memory_mib_ms,
		compute_milli_ms = usage_daily.compute_milli_ms + excluded.compute_milli_ms,
		measured_ms = usage_daily.measured_ms + excluded.measured_ms,
		measured_compute_milli_ms = usage_daily.measured_compute_milli_ms + excluded.measured_compute_milli_ms,
		measured_memory_mib_ms = usage_daily.measured_memory_mib_ms + excluded.measured_memory_mib_ms,
		covered_compute_milli_ms = usage_daily.covered_compute_milli_ms + excluded.covered_compute_milli_ms,
		covered_memory_mib_ms = usage_daily.covered_memory_mib_ms + excluded.covered_memory_mib_ms`
}
