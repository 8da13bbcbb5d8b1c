package metricstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb"
	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane/metricstore/query"
)

// History for the query benchmark: 1,000 nodes × 8 devices × 3 series
// (utilisation, memory used, memory limit), one sample per minute for 24 h:
// 24,000 series, 34.6 M samples, generated straight into a TSDB and
// compacted into blocks as a day-old Prometheus would hold it.
const (
	histSpan     = 24 * time.Hour
	histInterval = time.Minute
)

func generateHistory(b *testing.B, end time.Time) *tsdb.DB {
	b.Helper()
	opts := tsdb.DefaultOptions()
	db, err := tsdb.Open(b.TempDir(), nil, nil, opts, nil)
	require.NoError(b, err)
	b.Cleanup(func() { _ = db.Close() })

	type series struct {
		ls  labels.Labels
		ref storage.SeriesRef
		val func(step int) float64
	}
	var all []*series
	for n := 0; n < benchNodes; n++ {
		node := fmt.Sprintf("node-%04d", n)
		for d := 0; d < benchDevices; d++ {
			dev := fmt.Sprint(d)
			seed := n*benchDevices + d
			all = append(all,
				&series{ls: labels.FromStrings("__name__", "hw_gpu_utilization", "node", node, "device", dev, "vendor", "nvidia"),
					val: func(step int) float64 { return float64((seed*7 + step) % 101) }},
				&series{ls: labels.FromStrings("__name__", "hw_gpu_memory_usage_bytes", "node", node, "device", dev),
					val: func(step int) float64 { return float64(((seed + step) % 80) << 30 / 10) }},
				&series{ls: labels.FromStrings("__name__", "hw_gpu_memory_limit_bytes", "node", node, "device", dev),
					val: func(int) float64 { return 80 << 30 }})
		}
	}
	start := end.Add(-histSpan)
	for step, ts := 0, start; !ts.After(end); step, ts = step+1, ts.Add(histInterval) {
		app := db.AppenderV2(context.Background())
		for _, s := range all {
			s.ref, err = app.Append(s.ref, s.ls, 0, ts.UnixMilli(), s.val(step), nil, nil, storage.AOptions{})
			require.NoError(b, err)
		}
		require.NoError(b, app.Commit())
	}
	require.NoError(b, db.Compact(context.Background()))
	return db
}

func BenchmarkQuery(b *testing.B) {
	end := time.Now().Truncate(time.Minute)
	setup := time.Now()
	db := generateHistory(b, end)
	b.Logf("history generated and compacted in %s (%d blocks)", time.Since(setup).Round(time.Second), len(db.Blocks()))
	engine := promql.NewEngine(promql.EngineOpts{MaxSamples: 50_000_000, Timeout: 2 * time.Minute, LookbackDelta: 5 * time.Minute})
	q := query.NewEmbedded(engine, db)
	ctx := context.Background()

	instant := []struct{ name, expr string }{
		{"scheduler/avg_over_time_5m_by_node_device", `avg by (node, device) (avg_over_time(hw_gpu_utilization[5m]))`},
		{"alert/memory_ratio_max_by_node", `max by (node) (hw_gpu_memory_usage_bytes / hw_gpu_memory_limit_bytes) > 0.9`},
		{"alert/high_load_15m_by_node", `avg by (node) (avg_over_time(hw_gpu_utilization[15m])) > 90`},
		{"billing/avg_over_time_24h_by_node", `sum by (node) (avg_over_time(hw_gpu_utilization[24h]))`},
	}
	for _, c := range instant {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				v, err := q.Instant(ctx, c.expr, end)
				require.NoError(b, err)
				if len(v) == 0 && c.name[:5] != "alert" {
					b.Fatal("empty result")
				}
			}
		})
	}
	b.Run("console/range_24h_step_5m_by_node", func(b *testing.B) {
		for b.Loop() {
			m, err := q.Range(ctx, `avg by (node) (hw_gpu_utilization)`, end.Add(-histSpan), end, 5*time.Minute)
			require.NoError(b, err)
			require.Len(b, m, benchNodes)
		}
	})
}
