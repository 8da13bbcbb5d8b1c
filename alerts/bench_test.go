package alerts_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/alerts"
	"github.com/heteroflow/heteroflow/alerts/notify"
	"github.com/heteroflow/heteroflow/controlplane"
)

// Benchmark fleet (docs/BENCHMARKS.md, "Alert evaluation"): 1,000 nodes ×
// 8 devices, the device series the shipped rules read, 15 s apart.
const (
	benchNodes    = 1000
	benchDevices  = 8
	benchInterval = 15 * time.Second
	benchCustom   = 200
)

// loadFleet writes `minutes` of history ending at end for every device.
func loadFleet(b *testing.B, e *env, end time.Time, minutes int) {
	b.Helper()
	steps := minutes * 4
	for n := 0; n < benchNodes; n++ {
		app := e.db.AppenderV2(context.Background())
		host := fmt.Sprintf("node-%04d", n)
		for d := 0; d < benchDevices; d++ {
			idx := strconv.Itoa(d)
			base := []string{"host_name", host, "hw_index", idx, "hw_vendor", "nvidia", "hw_model", "H100"}
			// A healthy fleet with 1% of the nodes running one device hot
			// (above the load and temperature thresholds).
			series := map[string]float64{
				"hw_gpu_utilization_ratio":        float64((n*7+d*13)%80) / 100,
				"hw_gpu_memory_utilization_ratio": float64((n*3+d*11)%85) / 100,
				"hw_gpu_temperature_celsius":      40 + float64((n+d)%40),
				"hw_gpu_power_draw_watts":         300 + float64((n*5+d)%380),
				"hw_gpu_power_limit_watts":        700,
				"hw_errors_total":                 float64(n % 3),
			}
			if n%100 == 0 && d == 0 {
				series["hw_gpu_utilization_ratio"], series["hw_gpu_temperature_celsius"] = 0.99, 97
			}
			for s := 0; s <= steps; s++ {
				ts := end.Add(-time.Duration(steps-s) * benchInterval).UnixMilli()
				for name, v := range series {
					ls := labels.FromStrings(append([]string{"__name__", name}, base...)...)
					if name == "hw_errors_total" {
						ls = labels.FromStrings(append([]string{"__name__", name, "error_type", "ecc"}, base...)...)
					}
					_, err := app.Append(0, ls, 0, ts, v, nil, nil, storage.AOptions{})
					require.NoError(b, err)
				}
				for _, st := range []string{"ok", "degraded", "failed"} {
					v := 0.0
					if st == "ok" {
						v = 1
					}
					ls := labels.FromStrings(append([]string{"__name__", "hw_status", "hw_state", st}, base...)...)
					_, err := app.Append(0, ls, 0, ts, v, nil, nil, storage.AOptions{})
					require.NoError(b, err)
				}
			}
		}
		require.NoError(b, app.Commit())
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkEvaluation measures one evaluation interval of the shipped rules
// plus 200 custom rules over 1,000 nodes × 8 devices: CPU seconds per
// interval and the share of one core that is at a 15 s interval.
func BenchmarkEvaluation(b *testing.B) {
	e := newEnv(b)
	b.Cleanup(func() { _ = e.db.Close(); _ = e.store.Close() })
	end := e.t0.Add(time.Hour)
	loadFleet(b, e, end, 20)
	for i := 0; i < benchCustom; i++ {
		// Typical tenant rules: per-node aggregates with their own thresholds.
		expr := fmt.Sprintf(`avg by (host_name) (avg_over_time(hw_gpu_utilization_ratio{host_name=~"node-%d.*"}[5m])) > 0.%02d`, i%10, 50+i%50)
		if i%2 == 1 {
			expr = fmt.Sprintf(`max by (host_name) (hw_gpu_temperature_celsius{hw_index="%d"}) > %d`, i%8, 60+i%30)
		}
		require.NoError(b, e.store.CreateAlertRule(context.Background(), &controlplane.AlertRule{Tenant: fmt.Sprintf("t%d", i%20),
			Name: fmt.Sprintf("Custom%d", i), Expr: expr, For: time.Minute, Level: controlplane.AlertWarn, Enabled: true}))
	}
	en, err := alerts.New(alerts.Options{Store: e.store, Querier: e.q, Appendable: e.db, Queryable: e.db, Interval: benchInterval})
	require.NoError(b, err)
	ts := end.Add(-5 * benchInterval)
	require.NoError(b, en.EvalAt(context.Background(), ts)) // take over, restore, open the first instances
	b.ResetTimer()
	cpu0, wall0 := cpuTime(), time.Now()
	for i := 0; i < b.N; i++ {
		ts = ts.Add(benchInterval)
		require.NoError(b, en.EvalAt(context.Background(), ts))
	}
	cpu := cpuTime() - cpu0
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/interval")
	b.ReportMetric(cpu.Seconds()/float64(b.N)/benchInterval.Seconds(), "cores@15s")
	b.ReportMetric(time.Since(wall0).Seconds()/float64(b.N), "wall-s/interval")
	b.ReportMetric(float64(len(en.OpenAlerts())), "open-alerts")
}

// BenchmarkNotificationLatency measures, per alert, the time from the
// evaluation at which its condition holds (after `for`) to the signed
// webhook receiving it: engine → store instance + outbox row → delivery.
// The condition-to-evaluation wait adds up to one interval on top.
func BenchmarkNotificationLatency(b *testing.B) {
	e := newEnv(b)
	b.Cleanup(func() { _ = e.db.Close(); _ = e.store.Close() })
	var mu sync.Mutex
	got := make(chan time.Time, 1)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		select {
		case got <- time.Now():
		default:
		}
	}))
	b.Cleanup(hook.Close)
	ch := &controlplane.NotifyChannel{Name: "hook", Type: controlplane.ChannelWebhook, Enabled: true,
		Config: map[string]string{"url": hook.URL, "secret": "s"}, SendResolved: true}
	require.NoError(b, e.store.CreateChannel(context.Background(), ch))
	require.NoError(b, e.store.CreateAlertRule(context.Background(), &controlplane.AlertRule{Name: "Hot",
		Expr: `hw_gpu_utilization_ratio > 0.9`, Level: controlplane.AlertError, Enabled: true}))
	w := &notify.Worker{Store: e.store, Interval: time.Hour}
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	go w.Run(ctx)
	en, err := alerts.New(alerts.Options{Store: e.store, Querier: e.q, Appendable: e.db, Queryable: e.db, Interval: benchInterval,
		Queued: w.Wake})
	require.NoError(b, err)
	var total time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m := 2 * i
		e.util(m, 0.99) // hot: fires at this evaluation
		start := time.Now()
		require.NoError(b, en.EvalAt(context.Background(), e.at(m)))
		select {
		case at := <-got:
			total += at.Sub(start)
		case <-time.After(10 * time.Second):
			b.Fatal("no notification within 10s")
		}
		e.util(m+1, 0.1) // cools down: resolves (resolved notifications go out too)
		require.NoError(b, en.EvalAt(context.Background(), e.at(m+1)))
		<-got
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/notification")
}
