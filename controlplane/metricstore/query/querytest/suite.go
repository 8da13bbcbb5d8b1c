package querytest

import (
	"context"
	"fmt"
	"math"
	"sort"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane/metricstore/query"
)

// Fixture shape: Nodes × Devices GPUs, one sample every Step over Span
// ending at End.
const (
	Nodes   = 3
	Devices = 2
	Step    = 15 * time.Second
	Span    = 10 * time.Minute
)

// Util is the constant utilisation of a device, so every aggregate has one
// exact answer on every backend: node n device d → 10n+d percent.
func Util(node, device int) float64 { return float64(10*node + device) }

// Load appends the fixture through app (a TSDB, or a forwarder to a remote
// store) and returns the time queries should be evaluated at.
func Load(t *testing.T, app storage.AppendableV2, end time.Time) {
	t.Helper()
	a := app.AppenderV2(context.Background())
	for n := 0; n < Nodes; n++ {
		for d := 0; d < Devices; d++ {
			node, dev := fmt.Sprintf("node-%d", n), fmt.Sprint(d)
			util := labels.FromStrings("__name__", "hw_gpu_utilization", "node", node, "device", dev, "vendor", "nvidia")
			used := labels.FromStrings("__name__", "hw_gpu_memory_usage_bytes", "node", node, "device", dev)
			limit := labels.FromStrings("__name__", "hw_gpu_memory_limit_bytes", "node", node, "device", dev)
			energy := labels.FromStrings("__name__", "hw_gpu_energy_joules_total", "node", node, "device", dev)
			for ts, i := end.Add(-Span), 0; !ts.After(end); ts, i = ts.Add(Step), i+1 {
				ms := ts.UnixMilli()
				for _, s := range []struct {
					ls labels.Labels
					v  float64
				}{
					{util, Util(n, d)},
					{used, float64((d + 1) << 30)},
					{limit, float64(8 << 30)},
					// 100 W constant → the counter grows 100 J/s.
					{energy, float64(i) * 100 * Step.Seconds()},
				} {
					_, err := a.Append(0, s.ls, 0, ms, s.v, nil, nil, storage.AOptions{})
					require.NoError(t, err)
				}
			}
		}
	}
	require.NoError(t, a.Commit())
}

// WaitVisible polls until the fixture is queryable (remote stores index
// asynchronously).
func WaitVisible(t *testing.T, q query.Querier, at time.Time) {
	t.Helper()
	want := Nodes * Devices
	require.Eventually(t, func() bool {
		v, err := q.Instant(context.Background(), `count(hw_gpu_utilization) + count(hw_gpu_energy_joules_total) * 0`, at)
		return err == nil && len(v) == 1 && int(v[0].Value) == want
	}, 30*time.Second, 250*time.Millisecond, "fixture never became visible")
}

// Run executes the suite against q, which must see data loaded by Load at end.
func Run(t *testing.T, q query.Querier, end time.Time) {
	ctx := context.Background()
	at := end

	t.Run("scheduler load-aware: avg_over_time by node, device", func(t *testing.T) {
		v, err := q.Instant(ctx, `avg by (node, device) (avg_over_time(hw_gpu_utilization[5m]))`, at)
		require.NoError(t, err)
		require.Len(t, v, Nodes*Devices)
		for _, s := range v {
			var n, d int
			_, err := fmt.Sscanf(string(s.Metric["node"])+" "+string(s.Metric["device"]), "node-%d %d", &n, &d)
			require.NoError(t, err)
			require.InDelta(t, Util(n, d), float64(s.Value), 1e-9, "node %d device %d", n, d)
		}
	})

	t.Run("alert memory pressure: max by node of used/limit", func(t *testing.T) {
		v, err := q.Instant(ctx, `max by (node) (hw_gpu_memory_usage_bytes / hw_gpu_memory_limit_bytes)`, at)
		require.NoError(t, err)
		require.Len(t, v, Nodes)
		for _, s := range v {
			require.InDelta(t, float64(Devices)/8, float64(s.Value), 1e-9) // the last device uses Devices GiB of 8
		}
	})

	t.Run("alert threshold: filter keeps only matching series", func(t *testing.T) {
		v, err := q.Instant(ctx, `hw_gpu_utilization > 20`, at)
		require.NoError(t, err)
		require.Len(t, v, Devices-1) // only node-2 device ≥1 (21) is above 20
		require.Equal(t, model.LabelValue("node-2"), v[0].Metric["node"])
	})

	t.Run("billing energy: rate of a counter", func(t *testing.T) {
		v, err := q.Instant(ctx, `sum(rate(hw_gpu_energy_joules_total[5m]))`, at)
		require.NoError(t, err)
		require.Len(t, v, 1)
		// 100 W per device; backends extrapolate differently at the edges.
		require.InDelta(t, 100.0*Nodes*Devices, float64(v[0].Value), 100.0*Nodes*Devices*0.05)
	})

	t.Run("scalar result becomes one unlabelled sample", func(t *testing.T) {
		v, err := q.Instant(ctx, `scalar(count(hw_gpu_utilization))`, at)
		require.NoError(t, err)
		require.Len(t, v, 1)
		require.Empty(t, v[0].Metric)
		require.Equal(t, float64(Nodes*Devices), float64(v[0].Value))
	})

	t.Run("console range: one series per node", func(t *testing.T) {
		m, err := q.Range(ctx, `sum by (node) (hw_gpu_utilization)`, at.Add(-5*time.Minute), at, time.Minute)
		require.NoError(t, err)
		require.Len(t, m, Nodes)
		sort.Slice(m, func(i, j int) bool { return m[i].Metric["node"] < m[j].Metric["node"] })
		for n, ss := range m {
			require.GreaterOrEqual(t, len(ss.Values), 5)
			want := Util(n, 0) + Util(n, 1)
			for _, p := range ss.Values {
				require.InDelta(t, want, float64(p.Value), 1e-9)
			}
		}
	})

	t.Run("absent series is empty, not zero", func(t *testing.T) {
		v, err := q.Instant(ctx, `hw_gpu_utilization{node="nope"}`, at)
		require.NoError(t, err)
		require.Empty(t, v)
	})

	t.Run("invalid expression is ErrInvalidQuery", func(t *testing.T) {
		_, err := q.Instant(ctx, `sum(rate(hw_gpu_utilization[5m])`, at)
		require.ErrorIs(t, err, query.ErrInvalidQuery)
		_, err = q.Range(ctx, `hw_gpu_utilization`, at, at.Add(-time.Minute), time.Second)
		require.ErrorIs(t, err, query.ErrInvalidQuery)
	})

	t.Run("range vector from instant is ErrInvalidQuery", func(t *testing.T) {
		_, err := q.Instant(ctx, `hw_gpu_utilization[1m]`, at)
		require.ErrorIs(t, err, query.ErrInvalidQuery)
	})

	t.Run("no NaN leaks into aggregates", func(t *testing.T) {
		v, err := q.Instant(ctx, `avg(hw_gpu_utilization)`, at)
		require.NoError(t, err)
		require.Len(t, v, 1)
		require.False(t, math.IsNaN(float64(v[0].Value)))
	})
}
