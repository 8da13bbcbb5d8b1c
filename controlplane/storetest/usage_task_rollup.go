package storetest

import (
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
)

// testTopTasksRollup: the heaviest tasks the store ranks (from the per-task
// rollup, or from the records when the filter names a project or an owner)
// and their rows, measured usage included, equal what the stored records
// give when ranked and summed one by one, for every period and filter a
// report asks; records written twice add nothing to the ranking.
func testTopTasksRollup(t *testing.T, open BillingOpener) {
	s := open(t)
	d1 := date("2026-11-02")
	day := func(n int) time.Time { return d1.AddDate(0, 0, n) }
	var recs []*controlplane.UsageRecord
	id := int64(500)
	add := func(d int, task int64, tenant, project string, owner int64, model string, qos controlplane.QoS, ms, share int64) {
		id++
		r := usageRec(id, day(d), tenant, owner)
		r.TaskID, r.Project, r.Model, r.QoS, r.DurationMS = task, project, model, qos, ms
		r.ShareMilli, r.ComputeMilli, r.MemoryMiB = int(share), int(share), share*80
		r.Owner = map[int64]string{0: "", 7: "ann", 8: "ben"}[owner]
		r.Measured = controlplane.UsageMeasured{MS: ms / 3, ComputeMilliMS: ms / 3 * share / 2, MemoryMiBMS: ms / 3 * 512}
		recs = append(recs, r)
	}
	// Task 1: heavy, over three days, two devices. Task 2: gold H100 in two
	// projects. Task 3: many bronze A100 hours. Task 4..6: small.
	add(0, 1, "t1", "p1", 7, "H100", controlplane.QoSGold, 3_600_000, 1000)
	add(1, 1, "t1", "p1", 7, "H100", controlplane.QoSGold, 7_200_000, 1000)
	add(1, 1, "t1", "p1", 7, "H100", controlplane.QoSGold, 1_800_000, 500)
	add(2, 1, "t1", "p1", 7, "H100", controlplane.QoSGold, 900_000, 1000)
	add(1, 2, "t1", "p1", 8, "H100", controlplane.QoSGold, 5_000_000, 1000)
	add(1, 2, "t1", "p2", 8, "H100", controlplane.QoSGold, 5_000_000, 250)
	add(0, 3, "t2", "p1", 0, "A100", controlplane.QoSBronze, 40_000_000, 1000)
	add(2, 3, "t2", "p1", 0, "A100", controlplane.QoSBronze, 2_000_000, 1000)
	add(0, 4, "t2", "p2", 8, "H100", controlplane.QoSSilver, 600_000, 250)
	add(2, 5, "t1", "p2", 7, "A100", controlplane.QoSGold, 1_200_000, 500)
	add(1, 6, "t2", "p1", 8, "H100", controlplane.QoSGold, 300_000, 1000)
	// Task 6 is fifth: counted twice it would pass task 4.
	_, err := s.RecordUsage(ctx(t), []*controlplane.UsageRecord{recs[0], recs[10]}, nil)
	require.NoError(t, err)
	_, err = s.RecordUsage(ctx(t), recs, nil) // overlaps the first batch: only the new ones count
	require.NoError(t, err)
	again, err := s.RecordUsage(ctx(t), recs, nil)
	require.NoError(t, err)
	require.Empty(t, again)

	rates := []controlplane.UsageRate{
		{Segment: 0, Vendor: "nvidia", Model: "H100", QoS: controlplane.QoSGold, DeviceMilliMS: 3e-6, MemoryMiBMS: 1e-9, ComputeMilliMS: 1e-7},
		{Segment: 1, Vendor: "nvidia", Model: "H100", QoS: controlplane.QoSGold, DeviceMilliMS: 5e-6},
		{Segment: 0, Vendor: "nvidia", Model: "A100", QoS: controlplane.QoSBronze, DeviceMilliMS: 1e-7},
		{Segment: 1, Vendor: "nvidia", Model: "A100", QoS: controlplane.QoSBronze, DeviceMilliMS: 1e-7},
		{Segment: 1, Vendor: "nvidia", Model: "A100", QoS: controlplane.QoSGold, ComputeMilliMS: 2e-6},
		{Segment: 0, Vendor: "nvidia", Model: "H100", QoS: controlplane.QoSSilver, DeviceMilliMS: 9e-6},
	}
	cases := []struct {
		name   string
		filter controlplane.UsageFilter
		cuts   []time.Time
		top    int
		tasks  []int64
	}{
		{"month all tenants", controlplane.UsageFilter{From: day(0), To: day(30)}, []time.Time{day(1)}, 3, nil},
		{"no cuts", controlplane.UsageFilter{From: day(0), To: day(30)}, nil, 4, nil},
		{"one day", controlplane.UsageFilter{From: day(1), To: day(2)}, nil, 2, []int64{6}},
		{"week of one tenant", controlplane.UsageFilter{From: day(0), To: day(7), Tenant: "t2"}, []time.Time{day(2)}, 1, nil},
		{"project", controlplane.UsageFilter{From: day(0), To: day(30), Tenant: "t1", Project: "p1"}, []time.Time{day(1)}, 2, nil},
		{"user", controlplane.UsageFilter{From: day(0), To: day(30), OwnerID: 8}, []time.Time{day(1)}, 2, []int64{4}},
		{"past the end of usage", controlplane.UsageFilter{From: day(5), To: day(9)}, nil, 3, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			seg := func(d time.Time) int {
				n := 0
				for _, cut := range c.cuts {
					if !d.Before(cut) {
						n++
					}
				}
				return n
			}
			// The expected rows: the records of the filter ranked by weight
			// and summed per segment, class and task, here in Go.
			f := c.filter
			weight, share := map[int64]float64{}, map[int64]int64{}
			type key struct {
				seg        int
				model, qos string
				task       int64
			}
			rows := map[key]*controlplane.UsageSum{}
			for _, r := range recs {
				if r.Day.Before(f.From) || !r.Day.Before(f.To) || (f.Tenant != "" && r.Tenant != f.Tenant) ||
					(f.Project != "" && r.Project != f.Project) || (f.OwnerID != 0 && r.OwnerID != f.OwnerID) {
					continue
				}
				sg := seg(r.Day)
				for _, p := range rates {
					if p.Segment == sg && p.Vendor == r.Vendor && p.Model == r.Model && p.QoS == r.QoS {
						weight[r.TaskID] += float64(r.DurationMS) * (float64(r.ShareMilli)*p.DeviceMilliMS +
							float64(r.MemoryMiB)*p.MemoryMiBMS + float64(r.ComputeMilli)*p.ComputeMilliMS)
					}
				}
				share[r.TaskID] += r.DurationMS * int64(r.ShareMilli)
				k := key{sg, r.Model, string(r.QoS), r.TaskID}
				u := rows[k]
				if u == nil {
					u = &controlplane.UsageSum{Set: controlplane.SumTask, Segment: sg, Vendor: r.Vendor, Model: r.Model,
						QoS: r.QoS, Tenant: r.Tenant, Project: r.Project, Owner: r.Owner, TaskID: r.TaskID}
					rows[k] = u
				}
				u.Tenant, u.Project, u.Owner = min(u.Tenant, r.Tenant), min(u.Project, r.Project), min(u.Owner, r.Owner)
				u.SliceMS += r.DurationMS
				u.DeviceMilliMS += r.DurationMS * int64(r.ShareMilli)
				u.MemoryMiBMS += r.DurationMS * r.MemoryMiB
				u.ComputeMilliMS += r.DurationMS * int64(r.ComputeMilli)
				u.Measured.MS += r.Measured.MS
				u.Measured.ComputeMilliMS += r.Measured.ComputeMilliMS
				u.Measured.MemoryMiBMS += r.Measured.MemoryMiBMS
				u.CoveredComputeMilliMS += r.Measured.MS * int64(r.ComputeMilli)
				u.CoveredMemoryMiBMS += r.Measured.MS * r.MemoryMiB
			}
			var ranked []int64
			for task := range share {
				ranked = append(ranked, task)
			}
			sort.Slice(ranked, func(i, j int) bool {
				a, b := ranked[i], ranked[j]
				if weight[a] != weight[b] {
					return weight[a] > weight[b]
				}
				if share[a] != share[b] {
					return share[a] > share[b]
				}
				return a < b
			})
			chosen := map[int64]bool{}
			for i, task := range ranked {
				if i < c.top {
					chosen[task] = true
				}
			}
			for _, task := range c.tasks {
				chosen[task] = true
			}
			var want []*controlplane.UsageSum
			for k, u := range rows {
				if chosen[k.task] {
					want = append(want, u)
				}
			}

			got, err := s.SumUsage(ctx(t), controlplane.UsageSumRequest{Filter: f, Cuts: c.cuts, Top: c.top,
				Tasks: c.tasks, Rates: rates, TasksOnly: true})
			require.NoError(t, err)
			require.ElementsMatch(t, want, got)
		})
	}
}
