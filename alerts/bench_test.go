package alerts_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
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
	benchTenants  = 20
)

// loadFleet writes `minutes` of history ending at end for every device: a
// healthy fleet with 1% of the nodes running one device hot (above the
// load and temperature thresholds).
func loadFleet(b *testing.B, e *env, end time.Time, minutes int) {
	b.Helper()
	steps := minutes * 4
	type series struct {
		ls  labels.Labels
		v   float64
		ref storage.SeriesRef
	}
	for n := 0; n < benchNodes; n++ {
		host := fmt.Sprintf("node-%04d", n)
		var ss []*series
		add := func(v float64, kv ...string) {
			ss = append(ss, &series{ls: labels.FromStrings(kv...), v: v})
		}
		for d := 0; d < benchDevices; d++ {
			base := []string{"host_name", host, "hw_index", strconv.Itoa(d), "hw_vendor", "nvidia", "hw_model", "H100"}
			util, temp := float64((n*7+d*13)%80)/100, 40+float64((n+d)%40)
			if n%100 == 0 && d == 0 {
				util, temp = 0.99, 97
			}
			add(util, append([]string{"__name__", "hw_gpu_utilization_ratio"}, base...)...)
			add(float64((n*3+d*11)%85)/100, append([]string{"__name__", "hw_gpu_memory_utilization_ratio"}, base...)...)
			add(temp, append([]string{"__name__", "hw_gpu_temperature_celsius"}, base...)...)
			add(300+float64((n*5+d)%380), append([]string{"__name__", "hw_gpu_power_draw_watts"}, base...)...)
			add(700, append([]string{"__name__", "hw_gpu_power_limit_watts"}, base...)...)
			add(float64(n%3), append([]string{"__name__", "hw_errors_total", "error_type", "ecc"}, base...)...)
			for _, st := range []string{"ok", "degraded", "failed"} {
				v := 0.0
				if st == "ok" {
					v = 1
				}
				add(v, append([]string{"__name__", "hw_status", "hw_state", st}, base...)...)
			}
		}
		app := e.db.AppenderV2(context.Background())
		for s := 0; s <= steps; s++ {
			ts := end.Add(-time.Duration(steps-s) * benchInterval).UnixMilli()
			for _, se := range ss {
				ref, err := app.Append(se.ref, se.ls, 0, ts, se.v, nil, nil, storage.AOptions{})
				require.NoError(b, err)
				se.ref = ref
			}
		}
		require.NoError(b, app.Commit())
	}
}

// tenantPool is the host_name regexp of tenant k's 50 nodes
// (node-0050k … node-0050k+49), as a tenant scopes its rules.
func tenantPool(k int) string {
	p := make([]string, 5)
	for i := range p {
		p[i] = fmt.Sprintf("%03d", 5*k+i)
	}
	return fmt.Sprintf(`node-(%s)[0-9]`, strings.Join(p, "|"))
}

// realisticRules are 200 custom rules as tenants write them: each of 20
// tenants has ten rules over its own 50 nodes (device load, idle nodes,
// memory, temperature, node power, ECC, health, saturation, queue wait,
// sustained heat), with thresholds above the healthy range and summaries
// templated from $labels and $value. On the benchmark fleet they catch the
// hot devices of the tenants that have one.
func realisticRules() []*controlplane.AlertRule {
	var out []*controlplane.AlertRule
	for k := 0; k < benchTenants; k++ {
		pool, tenant := tenantPool(k), fmt.Sprintf("t%d", k)
		rule := func(name, expr string, forDur time.Duration, lvl controlplane.AlertLevel, summary string) {
			out = append(out, &controlplane.AlertRule{Tenant: tenant, Name: name, Expr: expr, For: forDur, Level: lvl,
				Enabled: true, Annotations: map[string]string{"summary": summary}})
		}
		rule("DeviceBusy", fmt.Sprintf(`avg_over_time(hw_gpu_utilization_ratio{host_name=~%q}[10m]) > 0.9`, pool),
			5*time.Minute, controlplane.AlertWarn, `GPU {{ $labels.hw_index }} on {{ $labels.host_name }} at {{ $value | humanizePercentage }}`)
		rule("NodeIdle", fmt.Sprintf(`avg by (host_name) (avg_over_time(hw_gpu_utilization_ratio{host_name=~%q}[30m])) < 0.05`, pool),
			30*time.Minute, controlplane.AlertInfo, `{{ $labels.host_name }} idle: {{ $value | humanizePercentage }}`)
		rule("DeviceMemoryFull", fmt.Sprintf(`max_over_time(hw_gpu_memory_utilization_ratio{host_name=~%q}[5m]) > 0.95`, pool),
			2*time.Minute, controlplane.AlertError, `GPU {{ $labels.hw_index }} on {{ $labels.host_name }} memory {{ $value | humanizePercentage }}`)
		rule("NodeHot", fmt.Sprintf(`max by (host_name) (hw_gpu_temperature_celsius{host_name=~%q}) > %d`, pool, 88+k%5),
			2*time.Minute, controlplane.AlertWarn, `{{ $labels.host_name }} at {{ $value }} °C`)
		rule("NodePowerHigh", fmt.Sprintf(`sum by (host_name) (hw_gpu_power_draw_watts{host_name=~%q}) > 5400`, pool),
			5*time.Minute, controlplane.AlertWarn, `{{ $labels.host_name }} draws {{ $value }} W`)
		rule("DeviceECC", fmt.Sprintf(`increase(hw_errors_total{error_type="ecc",host_name=~%q}[1h]) > 0`, pool),
			0, controlplane.AlertError, `GPU {{ $labels.hw_index }} on {{ $labels.host_name }}: {{ $value }} ECC errors`)
		rule("DeviceDegraded", fmt.Sprintf(`hw_status{hw_state=~"degraded|failed",host_name=~%q} == 1`, pool),
			time.Minute, controlplane.AlertError, `GPU {{ $labels.hw_index }} on {{ $labels.host_name }} is {{ $labels.hw_state }}`)
		rule("NodeSaturated", fmt.Sprintf(`count by (host_name) (hw_gpu_utilization_ratio{host_name=~%q} > 0.95) >= 4`, pool),
			5*time.Minute, controlplane.AlertWarn, `{{ $labels.host_name }}: {{ $value }} GPUs saturated`)
		rule("QueueWaitLong", fmt.Sprintf(`max without (instance, job) (heteroflow_task_pending_oldest_seconds{tenant=%q}) > 3600`, tenant),
			0, controlplane.AlertWarn, `a task of {{ $labels.tenant }} waits {{ $value | humanizeDuration }}`)
		rule("DeviceHotSustained", fmt.Sprintf(`avg_over_time(hw_gpu_temperature_celsius{host_name=~%q,hw_model="H100"}[15m]) > 85`, pool),
			time.Minute, controlplane.AlertError, `GPU {{ $labels.hw_index }} on {{ $labels.host_name }} averages {{ $value }} °C`)
	}
	return out
}

// stressRules are 200 rules whose thresholds sit inside the healthy range,
// so each catches hundreds of nodes: thousands of alerts open and stay
// firing (the worst case, not what users write).
func stressRules() []*controlplane.AlertRule {
	out := make([]*controlplane.AlertRule, benchCustom)
	for i := range out {
		expr := fmt.Sprintf(`avg by (host_name) (avg_over_time(hw_gpu_utilization_ratio{host_name=~"node-%d.*"}[5m])) > 0.%02d`, i%10, 50+i%50)
		if i%2 == 1 {
			expr = fmt.Sprintf(`max by (host_name) (hw_gpu_temperature_celsius{hw_index="%d"}) > %d`, i%8, 60+i%30)
		}
		out[i] = &controlplane.AlertRule{Tenant: fmt.Sprintf("t%d", i%benchTenants), Name: fmt.Sprintf("Custom%d", i),
			Expr: expr, For: time.Minute, Level: controlplane.AlertWarn, Enabled: true}
	}
	return out
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkEvaluation measures evaluation intervals of the shipped rules
// plus 200 custom rules over 1,000 nodes × 8 devices: CPU seconds per
// interval and the share of one core that is at a 15 s interval. The
// engine first evaluates warm-up intervals (long enough for the `for` of
// every rule that fires to pass, so its alerts are open; the costliest one
// is reported as opening-cpu-s), then the timed ones.
func BenchmarkEvaluation(b *testing.B) {
	for _, sc := range []struct {
		name  string
		rules func() []*controlplane.AlertRule
	}{{"realistic", realisticRules}, {"stress", stressRules}} {
		b.Run(sc.name, func(b *testing.B) { benchEvaluation(b, sc.rules()) })
	}
}

func benchEvaluation(b *testing.B, custom []*controlplane.AlertRule) {
	e := newEnv(b)
	b.Cleanup(func() { _ = e.db.Close(); _ = e.store.Close() })
	const warm = 20
	end := e.t0.Add(time.Hour)
	start := end.Add(-time.Duration(warm+b.N) * benchInterval)
	loadFleet(b, e, end, 40)
	for _, r := range custom {
		require.NoError(b, e.store.CreateAlertRule(context.Background(), r))
	}
	en, err := alerts.New(alerts.Options{Store: e.store, Querier: e.q, Appendable: e.db, Queryable: e.db, Interval: benchInterval})
	require.NoError(b, err)
	ts := start
	var burst time.Duration     // the costliest warm-up interval after the first: when the alerts open
	for i := 0; i < warm; i++ { // take over, restore, open the instances
		c := cpuTime()
		require.NoError(b, en.EvalAt(context.Background(), ts))
		if c = cpuTime() - c; i > 0 && c > burst {
			burst = c
		}
		ts = ts.Add(benchInterval)
	}
	b.ResetTimer()
	cpu0, wall0 := cpuTime(), time.Now()
	for i := 0; i < b.N; i++ {
		require.NoError(b, en.EvalAt(context.Background(), ts))
		ts = ts.Add(benchInterval)
	}
	cpu := cpuTime() - cpu0
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/interval")
	b.ReportMetric(cpu.Seconds()/float64(b.N)/benchInterval.Seconds(), "cores@15s")
	b.ReportMetric(time.Since(wall0).Seconds()/float64(b.N), "wall-s/interval")
	b.ReportMetric(float64(len(en.OpenAlerts())), "open-alerts")
	b.ReportMetric(burst.Seconds(), "opening-cpu-s")
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
