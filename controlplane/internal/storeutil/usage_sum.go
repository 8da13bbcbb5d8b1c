package storeutil

import (
	"strconv"
	"strings"

	"github.com/heteroflow/heteroflow/controlplane"
)

// usageSums are the summed quantities of a group, exact integers.
const usageSums = `CAST(SUM(duration_ms) AS BIGINT), CAST(SUM(duration_ms * share_milli) AS BIGINT),
	CAST(SUM(duration_ms * memory_mib) AS BIGINT), CAST(SUM(duration_ms * compute_milli) AS BIGINT),
	CAST(SUM(measured_ms) AS BIGINT), CAST(SUM(measured_compute_milli_ms) AS BIGINT),
	CAST(SUM(measured_memory_mib_ms) AS BIGINT), CAST(SUM(measured_ms * compute_milli) AS BIGINT),
	CAST(SUM(measured_ms * memory_mib) AS BIGINT)`

// maxListedTasks bounds the task ids a query names one by one; past it
// every task's rows are returned.
const maxListedTasks = 5000

// UsageSumQuery is the SQL (rows in controlplane.UsageSum's field order) of controlplane.UsageSumStore.SumUsage for both
// dialects: the filtered records (with their price segment) summed by day
// and class, by segment, class and tenant / project / owner, and the rows
// of the heaviest tasks (weighted by req.Rates) and of req.Tasks.
func UsageSumQuery(numbered bool, req controlplane.UsageSumRequest) (string, []any) {
	a := &Args{Numbered: numbered}
	f := req.Filter
	seg := "0"
	if len(req.Cuts) > 0 {
		var b strings.Builder
		b.WriteString("CASE")
		for i, c := range req.Cuts {
			b.WriteString(" WHEN day < " + a.Add(c.UTC().Format(controlplane.DateLayout)) + " THEN " + strconv.Itoa(i))
		}
		b.WriteString(" ELSE " + strconv.Itoa(len(req.Cuts)) + " END")
		seg = b.String()
	}
	where := "day >= " + a.Add(f.From.UTC().Format(controlplane.DateLayout)) +
		" AND day < " + a.Add(f.To.UTC().Format(controlplane.DateLayout))
	if f.Tenant != "" {
		where += " AND tenant = " + a.Add(f.Tenant)
	}
	if f.Project != "" {
		where += " AND project = " + a.Add(f.Project)
	}
	if f.OwnerID != 0 {
		where += " AND owner_id = " + a.Add(f.OwnerID)
	}
	if f.TaskID != 0 {
		where += " AND task_id = " + a.Add(f.TaskID)
	}
	var rates strings.Builder
	for i, r := range req.Rates {
		if i > 0 {
			rates.WriteString(" UNION ALL ")
		}
		rates.WriteString("SELECT CAST(" + a.Add(r.Segment) + " AS INTEGER) AS seg, CAST(" + a.Add(r.Vendor) +
			" AS TEXT) AS vendor, CAST(" + a.Add(r.Model) + " AS TEXT) AS model, CAST(" + a.Add(string(r.QoS)) +
			" AS TEXT) AS qos, CAST(" + a.Add(r.DeviceMilliMS) + " AS DOUBLE PRECISION) AS dr, CAST(" +
			a.Add(r.MemoryMiBMS) + " AS DOUBLE PRECISION) AS mr, CAST(" + a.Add(r.ComputeMilliMS) + " AS DOUBLE PRECISION) AS cr")
	}
	if len(req.Rates) == 0 {
		rates.WriteString("SELECT 0 AS seg, '' AS vendor, '' AS model, '' AS qos, 0.0 AS dr, 0.0 AS mr, 0.0 AS cr WHERE 1 = 0")
	}
	top := req.Top
	if top <= 0 {
		top = 20
	}
	limit := a.Add(top) // before the task ids: SQLite's placeholders are positional
	tasks := "task_id IN (SELECT task_id FROM heavy)"
	if len(req.Tasks) > maxListedTasks {
		tasks = "1 = 1"
	} else if len(req.Tasks) > 0 {
		ph := make([]string, len(req.Tasks))
		for i, id := range req.Tasks {
			ph[i] = a.Add(id)
		}
		tasks += " OR task_id IN (" + strings.Join(ph, ", ") + ")"
	}
	sets := []string{"daily", "tenant", "project", "user", "task"}
	switch {
	case req.TasksOnly:
		sets = sets[4:]
	case req.SkipTasks:
		sets = sets[:4]
	}
	q := `WITH r AS (SELECT day, ` + seg + ` AS seg, vendor, model, qos, tenant, project, owner, task_id, duration_ms,
		share_milli, memory_mib, compute_milli, measured_ms, measured_compute_milli_ms, measured_memory_mib_ms
		FROM usage_records WHERE ` + where + `),
	rates AS (` + rates.String() + `),
	heavy AS (SELECT r.task_id FROM r LEFT JOIN rates p ON p.seg = r.seg AND p.vendor = r.vendor AND p.model = r.model
		AND p.qos = r.qos GROUP BY r.task_id
		ORDER BY SUM(r.duration_ms * (r.share_milli * COALESCE(p.dr, 0) + r.memory_mib * COALESCE(p.mr, 0) +
			r.compute_milli * COALESCE(p.cr, 0))) DESC, SUM(r.duration_ms * r.share_milli) DESC, r.task_id
		LIMIT ` + limit + `)
	`
	parts := map[string]string{
		"daily": `SELECT 'daily', day, 0, vendor, model, qos, '', '', '', 0, ` + usageSums + ` FROM r GROUP BY day, vendor, model, qos`,
		"tenant": `SELECT 'tenant', '', seg, vendor, model, qos, tenant, '', '', 0, ` + usageSums + ` FROM r
		GROUP BY seg, vendor, model, qos, tenant`,
		"project": `SELECT 'project', '', seg, vendor, model, qos, tenant, project, '', 0, ` + usageSums + ` FROM r
		GROUP BY seg, vendor, model, qos, tenant, project`,
		"user": `SELECT 'user', '', seg, vendor, model, qos, MIN(tenant), '', owner, 0, ` + usageSums + ` FROM r
		GROUP BY seg, vendor, model, qos, owner`,
		"task": `SELECT 'task', '', seg, vendor, model, qos, MIN(tenant), MIN(project), MIN(owner), task_id, ` + usageSums + ` FROM r
		WHERE ` + tasks + ` GROUP BY seg, vendor, model, qos, task_id`,
	}
	var sel []string
	for _, n := range sets {
		sel = append(sel, parts[n])
	}
	q += strings.Join(sel, "\nUNION ALL\n")
	return q, a.Vals
}
