package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
)

// testRecordUsageBatch: a pass's batch of over a thousand records (more
// than a store may write in one multi-row statement), with a key given
// twice far apart and a second call that repeats part of it,
// returns each newly stored record once, in the order given, and leaves
// both rollups exactly the sum of the stored records.
func testRecordUsageBatch(t *testing.T, open BillingOpener) {
	s := open(t)
	d1 := date("2026-10-07")
	d2 := d1.AddDate(0, 0, 1)
	var recs []*controlplane.UsageRecord
	for i := range 1234 {
		day := d1
		if i%3 == 0 {
			day = d2
		}
		r := usageRec(int64(i+1), day, []string{"t1", "t2", "t3"}[i%3], 0)
		// Several records per task and day (the per-task rollup sums them);
		// every task a different weight, so the ranking has no ties.
		r.TaskID, r.DurationMS = int64(i/4+1), int64(1000+i)
		r.Measured = controlplane.UsageMeasured{MS: int64(i), ComputeMilliMS: int64(i) * 7, MemoryMiBMS: int64(i) * 11}
		recs = append(recs, r)
	}
	dup := *recs[10] // the same key again, past the first statement's rows
	dup.DurationMS = 1
	batch := slices.Insert(slices.Clone(recs), 700, &dup)

	in, err := s.RecordUsage(ctx(t), batch[:900], nil)
	require.NoError(t, err)
	require.Equal(t, recs[:899], in, "each new record once, first given first")
	in, err = s.RecordUsage(ctx(t), batch, nil) // a restarted meter: the first 900 are stored
	require.NoError(t, err)
	require.Equal(t, recs[899:], in)

	stored, err := s.ListUsage(ctx(t), controlplane.UsageFilter{From: d1, To: d2.AddDate(0, 0, 1)})
	require.NoError(t, err)
	require.Len(t, stored, len(recs))
	type class struct {
		day    time.Time
		tenant string
	}
	want := map[class]*controlplane.UsageSum{}
	taskWeight := map[int64]int64{}
	for _, r := range stored {
		require.NotEqual(t, int64(1), r.DurationMS, "the repeated key keeps its first record")
		c := class{r.Day, r.Tenant}
		w := want[c]
		if w == nil {
			w = &controlplane.UsageSum{}
			want[c] = w
		}
		w.SliceMS += r.DurationMS
		w.DeviceMilliMS += r.DurationMS * int64(r.ShareMilli)
		w.MemoryMiBMS += r.DurationMS * r.MemoryMiB
		w.Measured.MS += r.Measured.MS
		w.Measured.ComputeMilliMS += r.Measured.ComputeMilliMS
		w.CoveredMemoryMiBMS += r.Measured.MS * r.MemoryMiB
		taskWeight[r.TaskID] += r.DurationMS * int64(r.ShareMilli)
	}
	for c, w := range want {
		sums, err := s.SumUsage(ctx(t), controlplane.UsageSumRequest{SkipTasks: true,
			Filter: controlplane.UsageFilter{From: c.day, To: c.day.AddDate(0, 0, 1), Tenant: c.tenant}})
		require.NoError(t, err)
		var got controlplane.UsageSum
		for _, u := range sums {
			if u.Set == controlplane.SumDaily {
				got.SliceMS += u.SliceMS
				got.DeviceMilliMS += u.DeviceMilliMS
				got.MemoryMiBMS += u.MemoryMiBMS
				got.Measured.MS += u.Measured.MS
				got.Measured.ComputeMilliMS += u.Measured.ComputeMilliMS
				got.CoveredMemoryMiBMS += u.CoveredMemoryMiBMS
			}
		}
		require.Equal(t, *w, got, "daily rollup of %s %s", c.day.Format(controlplane.DateLayout), c.tenant)
	}

	// The per-task rollup ranks the heaviest tasks by the records' weights.
	tasks := make([]int64, 0, len(taskWeight))
	for id := range taskWeight {
		tasks = append(tasks, id)
	}
	slices.SortFunc(tasks, func(a, b int64) int { return int(taskWeight[b] - taskWeight[a]) })
	sums, err := s.SumUsage(ctx(t), controlplane.UsageSumRequest{TasksOnly: true, Top: 5,
		Filter: controlplane.UsageFilter{From: d1, To: d2.AddDate(0, 0, 1)},
		Rates:  []controlplane.UsageRate{{Vendor: "nvidia", Model: "H100", QoS: controlplane.QoSSilver, DeviceMilliMS: 1}}})
	require.NoError(t, err)
	top := map[int64]int64{}
	for _, u := range sums {
		top[u.TaskID] += u.DeviceMilliMS
	}
	wantTop := map[int64]int64{}
	for _, id := range tasks[:5] {
		wantTop[id] = taskWeight[id]
	}
	require.Equal(t, wantTop, top)
}
