package metering_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/metering"
)

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

func interval(bind string, release string) *controlplane.AllocationInterval {
	iv := &controlplane.AllocationInterval{Allocation: controlplane.Allocation{ID: 7, TaskID: 3, CreatedAt: at(bind),
		Vendor: "nvidia", Model: "H100", QoS: controlplane.QoSSilver, MemoryMiB: 40960, ComputeMilli: 250}}
	if release != "" {
		r := at(release)
		iv.ReleasedAt = &r
	}
	return iv
}

func TestSplit(t *testing.T) {
	t.Parallel()
	now := at("2026-11-04T12:00:00Z")
	cases := []struct {
		name     string
		iv       *controlplane.AllocationInterval
		complete bool
		days     []string
		ms       []int64
	}{
		{"within one day", interval("2026-11-01T10:00:00.2509Z", "2026-11-01T11:30:00.75Z"), false,
			[]string{"2026-11-01"}, []int64{5400500}}, // 1 h 30 min 0.500 s (µs truncated to ms)
		{"across two midnights", interval("2026-11-01T23:00:00Z", "2026-11-03T00:30:00Z"), false,
			[]string{"2026-11-01", "2026-11-02", "2026-11-03"}, []int64{3600000, 86400000, 1800000}},
		{"ends exactly at midnight", interval("2026-11-01T22:00:00Z", "2026-11-02T00:00:00Z"), false,
			[]string{"2026-11-01"}, []int64{7200000}},
		{"bound and released in the same ms", interval("2026-11-01T22:00:00.1001Z", "2026-11-01T22:00:00.1009Z"), false,
			nil, nil},
		{"held: up to now", interval("2026-11-03T20:00:00Z", ""), false,
			[]string{"2026-11-03", "2026-11-04"}, []int64{4 * 3600000, 12 * 3600000}},
		{"held: ended days only", interval("2026-11-02T20:00:00Z", ""), true,
			[]string{"2026-11-02", "2026-11-03"}, []int64{4 * 3600000, 86400000}},
		{"released: complete is ignored", interval("2026-11-04T10:00:00Z", "2026-11-04T11:00:00Z"), true,
			[]string{"2026-11-04"}, []int64{3600000}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			recs := metering.Split(c.iv, 500, now, c.complete)
			var days []string
			var ms []int64
			var sum int64
			for _, r := range recs {
				days = append(days, r.Day.Format(controlplane.DateLayout))
				ms = append(ms, r.DurationMS)
				sum += r.DurationMS
				require.Equal(t, r.End.Sub(r.Start).Milliseconds(), r.DurationMS)
				require.Equal(t, 500, r.ShareMilli)
				require.Equal(t, int64(7), r.IntervalID)
			}
			require.Equal(t, c.days, days)
			require.Equal(t, c.ms, ms)
			if c.iv.ReleasedAt != nil {
				whole := c.iv.ReleasedAt.Truncate(time.Millisecond).Sub(c.iv.CreatedAt.Truncate(time.Millisecond))
				require.Equal(t, whole.Milliseconds(), sum, "the records add up to the interval exactly")
			}
		})
	}
}

func TestShareMilli(t *testing.T) {
	t.Parallel()
	cases := []struct {
		compute        int
		mem, deviceMiB int64
		want           int
	}{
		{1000, 81920, 81920, 1000}, // whole device
		{250, 40960, 81920, 500},   // memory dominates: half the memory
		{750, 8192, 81920, 750},    // compute dominates
		{142, 10240, 81920, 142},   // MIG 1g.10gb: 1/7 compute vs 1/8 memory
		{300, 40960, 0, 300},       // device memory unknown: compute share
		{0, 100, 81920, 2},         // 100/81920 = 1.2‰, rounded up
		{200, 163840, 81920, 1000}, // overcommitted memory: at most the device
	}
	for _, c := range cases {
		require.Equal(t, c.want, metering.ShareMilli(c.compute, c.mem, c.deviceMiB), "%+v", c)
	}
}
