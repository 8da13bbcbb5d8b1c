package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
)

// testUsageSums: measured figures are stored with the records and the
// store's sums per day, segment, scope and task equal the records' sums.
func testUsageSums(t *testing.T, open BillingOpener) {
	s := open(t)
	d1 := date("2026-11-03")
	d2, d3 := d1.AddDate(0, 0, 1), d1.AddDate(0, 0, 2)
	var recs []*controlplane.UsageRecord
	add := func(id int64, day time.Time, tenant, project, owner string, qos controlplane.QoS, task int64, ms int64) {
		r := usageRec(id, day, tenant, 0)
		r.Project, r.Owner, r.QoS, r.TaskID, r.DurationMS = project, owner, qos, task, ms
		r.Measured = controlplane.UsageMeasured{MS: ms / 2, ComputeMilliMS: ms / 2 * 100, MemoryMiBMS: ms / 2 * 1024}
		recs = append(recs, r)
	}
	add(1, d1, "t1", "p1", "alice", controlplane.QoSGold, 10, 1000)
	add(1, d2, "t1", "p1", "alice", controlplane.QoSGold, 10, 4000)
	add(2, d2, "t1", "p2", "alice", controlplane.QoSBronze, 20, 2000)
	add(3, d3, "t2", "p1", "bob", controlplane.QoSGold, 30, 8000)
	add(4, d3, "t2", "p1", "bob", controlplane.QoSGold, 40, 100)
	_, err := s.RecordUsage(ctx(t), recs, nil)
	require.NoError(t, err)
	again, err := s.RecordUsage(ctx(t), recs, nil) // a restarted meter: the sums count each record once
	require.NoError(t, err)
	require.Empty(t, again)

	got, err := s.ListUsage(ctx(t), controlplane.UsageFilter{From: d1, To: d1.AddDate(0, 0, 1)})
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, controlplane.UsageMeasured{MS: 500, ComputeMilliMS: 50000, MemoryMiBMS: 512000}, got[0].Measured)

	picked, err := s.ListUsage(ctx(t), controlplane.UsageFilter{From: d1, To: d3.AddDate(0, 0, 1), IntervalIDs: []int64{1, 3}})
	require.NoError(t, err)
	require.Len(t, picked, 3, "interval 1 on two days and interval 3")
	for _, p := range picked {
		require.Contains(t, []int64{1, 3}, p.IntervalID)
	}
	none0, err := s.ListUsage(ctx(t), controlplane.UsageFilter{From: d1, To: d3.AddDate(0, 0, 1), IntervalIDs: []int64{}})
	require.NoError(t, err)
	require.Empty(t, none0, "an empty list of intervals selects none")

	// Segment 0 = d1, segment 1 = d2 and d3. Task 30 is the heaviest at
	// these rates; task 40 the lightest, asked for by id.
	req := controlplane.UsageSumRequest{Filter: controlplane.UsageFilter{From: d1, To: d3.AddDate(0, 0, 1)},
		Cuts: []time.Time{d2}, Top: 2, Tasks: []int64{40},
		Rates: []controlplane.UsageRate{{Segment: 1, Vendor: "nvidia", Model: "H100", QoS: controlplane.QoSGold, DeviceMilliMS: 1}}}
	sums, err := s.SumUsage(ctx(t), req)
	require.NoError(t, err)
	sets := map[string]map[string]*controlplane.UsageSum{}
	for _, u := range sums {
		if sets[u.Set] == nil {
			sets[u.Set] = map[string]*controlplane.UsageSum{}
		}
		day := ""
		if !u.Day.IsZero() {
			day = u.Day.Format(controlplane.DateLayout)
		}
		key := fmt.Sprintf("%s|%d|%s|%s|%s|%s|%d", day, u.Segment, u.QoS, u.Tenant, u.Project, u.Owner, u.TaskID)
		require.Nil(t, sets[u.Set][key], "one row per group: %s %s", u.Set, key)
		sets[u.Set][key] = u
		require.Equal(t, "nvidia", u.Vendor)
		require.Equal(t, "H100", u.Model)
	}
	require.Len(t, sets[controlplane.SumDaily], 4) // d1 gold, d2 gold, d2 bronze, d3 gold
	d3gold := sets[controlplane.SumDaily]["2026-11-05|0|gold||||0"]
	require.NotNil(t, d3gold)
	require.Equal(t, int64(8100), d3gold.SliceMS)
	require.Equal(t, int64(8100*500), d3gold.DeviceMilliMS)
	require.Equal(t, int64(8100*40960), d3gold.MemoryMiBMS)
	require.Equal(t, int64(8100*500), d3gold.ComputeMilliMS)
	require.Equal(t, controlplane.UsageMeasured{MS: 4050, ComputeMilliMS: 405000, MemoryMiBMS: 4050 * 1024}, d3gold.Measured)
	require.Equal(t, int64(4050*500), d3gold.CoveredComputeMilliMS)
	require.Equal(t, int64(4050*40960), d3gold.CoveredMemoryMiBMS)

	tenants := sets[controlplane.SumTenant]
	require.Len(t, tenants, 4) // t1 seg0 gold, t1 seg1 gold, t1 seg1 bronze, t2 seg1 gold
	require.Equal(t, int64(1000), tenants["|0|gold|t1|||0"].SliceMS)
	require.Equal(t, int64(4000), tenants["|1|gold|t1|||0"].SliceMS)
	require.Equal(t, int64(8100), tenants["|1|gold|t2|||0"].SliceMS)
	require.Len(t, sets[controlplane.SumProject], 4)
	require.Equal(t, int64(2000), sets[controlplane.SumProject]["|1|bronze|t1|p2||0"].SliceMS)
	users := sets[controlplane.SumUser]
	require.Len(t, users, 4)
	require.Equal(t, int64(8100), users["|1|gold|t2||bob|0"].SliceMS)

	tasks := map[int64]int64{}
	for _, u := range sets[controlplane.SumTask] {
		tasks[u.TaskID] += u.SliceMS
	}
	require.Equal(t, map[int64]int64{30: 8000, 10: 5000, 40: 100}, tasks, "the two heaviest and the one asked for")

	// The scope sets and the task rows asked for apart are the same rows.
	req.SkipTasks = true
	scopes, err := s.SumUsage(ctx(t), req)
	require.NoError(t, err)
	req.SkipTasks, req.TasksOnly = false, true
	taskRows, err := s.SumUsage(ctx(t), req)
	require.NoError(t, err)
	require.ElementsMatch(t, sums, append(scopes, taskRows...))
	for _, u := range taskRows {
		require.Equal(t, controlplane.SumTask, u.Set)
	}

	one, err := s.SumUsage(ctx(t), controlplane.UsageSumRequest{Filter: controlplane.UsageFilter{From: d1, To: d3.AddDate(0, 0, 1),
		Tenant: "t1", Project: "p1"}})
	require.NoError(t, err)
	var total int64
	for _, u := range one {
		if u.Set == controlplane.SumDaily {
			total += u.SliceMS
		}
	}
	require.Equal(t, int64(5000), total)
	none, err := s.SumUsage(ctx(t), controlplane.UsageSumRequest{Filter: controlplane.UsageFilter{From: d1, To: d2, Tenant: Hostile[0]}})
	require.NoError(t, err)
	require.Empty(t, none)
}

// testDeviceIntervals: the intervals of a node that overlap a window,
// released and still held.
func testDeviceIntervals(t *testing.T, open BillingOpener) {
	s := open(t)
	u := mkUser(t, s, fmt.Sprintf("dana-%d", uniq()), controlplane.RoleUser)
	n := mkNode(t, s, nil)
	done, live := ownedTask(t, s, u), ownedTask(t, s, u)
	_, err := s.BindTasks(ctx(t), []controlplane.Binding{binding(done, n.ID, 1), binding(live, n.ID, 1)})
	require.NoError(t, err)
	move(t, s, done.ID, controlplane.TaskFailed)
	_, err = s.ReleaseStale(ctx(t))
	require.NoError(t, err)
	hist, err := s.ListUnmeteredIntervals(ctx(t), 0)
	require.NoError(t, err)
	require.Len(t, hist, 1)
	iv := hist[0]

	all, err := s.ListDeviceIntervals(ctx(t), []string{n.ID, "elsewhere"}, iv.CreatedAt.Add(-time.Hour), time.Now().Add(time.Hour))
	require.NoError(t, err)
	require.Len(t, all, 2)
	byTask := map[int64]*controlplane.AllocationInterval{}
	for _, a := range all {
		byTask[a.TaskID] = a
		require.Equal(t, n.ID, a.NodeID)
		require.Equal(t, u.ID, a.OwnerID)
	}
	require.NotNil(t, byTask[done.ID].ReleasedAt)
	require.Nil(t, byTask[live.ID].ReleasedAt)

	after, err := s.ListDeviceIntervals(ctx(t), []string{n.ID}, iv.ReleasedAt.Add(time.Millisecond), time.Now().Add(time.Hour))
	require.NoError(t, err)
	require.Len(t, after, 1, "the released interval ended before the window")
	require.Equal(t, live.ID, after[0].TaskID)
	before, err := s.ListDeviceIntervals(ctx(t), []string{n.ID}, iv.CreatedAt.Add(-2*time.Hour), iv.CreatedAt.Add(-time.Hour))
	require.NoError(t, err)
	require.Empty(t, before)
	other, err := s.ListDeviceIntervals(ctx(t), []string{"elsewhere"}, iv.CreatedAt.Add(-time.Hour), time.Now().Add(time.Hour))
	require.NoError(t, err)
	require.Empty(t, other)
}
