package metering_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/metering"
)

// TestCounters: the usage counters grow by exactly what the records hold,
// once, however often the meter runs; budgets set the used-ratio gauge and
// the hard stop.
func TestCounters(t *testing.T) {
	t.Parallel()
	r := newReplay(t)
	ctx := t.Context()
	reg := prometheus.NewRegistry()
	var audit []string
	s, err := metering.New(metering.Options{Store: r.db, Now: r.clk.Now, Registry: reg,
		Audit: func(e *controlplane.AuditEntry) { audit = append(audit, e.Action) }})
	require.NoError(t, err)
	require.NoError(t, s.CreatePrice(ctx, &controlplane.PriceEntry{From: at("2026-11-01T00:00:00Z"), DeviceHour: 10}, "admin"))

	u := r.user("dora", "lab")
	tk := r.task(u, "cv", 0)
	r.clk.Set("2026-11-01T10:00:00Z")
	r.bind(tk, controlplane.QoSSilver, 40960, 250, 0, 1) // share 500‰ each
	r.clk.Set("2026-11-02T04:00:00Z")                    // Nov 1's 14 h are final now
	_, err = s.MeterOnce(ctx)
	require.NoError(t, err)
	l := []string{"nvidia", "H100", "silver", "lab", "cv"}
	dev := func() float64 {
		c, err := reg.Gather()
		require.NoError(t, err)
		require.NotEmpty(t, c)
		return testutil.ToFloat64(counterVec(t, reg, "heteroflow_billing_device_seconds_total", l))
	}
	require.InDelta(t, 2*0.5*14*3600, dev(), 1e-6)
	r.clk.Set("2026-11-02T06:00:00Z")
	r.move(tk.ID, controlplane.TaskRunning, controlplane.TaskSucceeded, false)
	r.sweep()
	for range 3 {
		_, err = s.MeterOnce(ctx)
		require.NoError(t, err)
	}
	require.InDelta(t, 2*0.5*20*3600, dev(), 1e-6, "Nov 2's 6 h added once")
	require.InDelta(t, 2*40*20*3600, testutil.ToFloat64(counterVec(t, reg, "heteroflow_billing_memory_gib_seconds_total", l)), 1e-6)
	require.InDelta(t, 2*25*20*3600, testutil.ToFloat64(counterVec(t, reg, "heteroflow_billing_compute_percent_seconds_total", l)), 1e-6)

	// 20 device-hours at 10 = 200 spent: an 80 % warning at 240, spent at 150.
	require.NoError(t, s.PutBudget(ctx, &controlplane.Budget{Tenant: "lab", Amount: 240}))
	require.NoError(t, s.PutBudget(ctx, &controlplane.Budget{Tenant: "lab", Project: "cv", Amount: 150, HardStop: "queue"}))
	require.InDelta(t, 200.0/240, gaugeValue(t, reg, "lab", ""), 1e-9)
	require.InDelta(t, 200.0/150, gaugeValue(t, reg, "lab", "cv"), 1e-9)
	require.ElementsMatch(t, []string{"billing.budget.80", "billing.budget.100"}, audit)
	policy, why := s.Gate(&controlplane.TaskSpec{Tenant: "lab", Project: "cv"})
	require.Equal(t, controlplane.QuotaQueue, policy)
	require.Contains(t, why, "lab/cv")
	policy, _ = s.Gate(&controlplane.TaskSpec{Tenant: "lab", Project: "nlp"})
	require.Empty(t, policy, "the tenant budget is not spent and has no hard stop")
	bs, err := s.Budgets(ctx)
	require.NoError(t, err)
	require.Len(t, bs, 2)
}

func counterVec(t *testing.T, reg *prometheus.Registry, name string, values []string) prometheus.Collector {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			got := map[string]string{}
			for _, lp := range m.GetLabel() {
				got[lp.GetName()] = lp.GetValue()
			}
			if got["vendor"] == values[0] && got["model"] == values[1] && got["qos"] == values[2] &&
				got["tenant"] == values[3] && got["project"] == values[4] {
				return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "x"}, func() float64 { return m.GetCounter().GetValue() })
			}
		}
	}
	t.Fatalf("no %s%v", name, values)
	return nil
}

func gaugeValue(t *testing.T, reg *prometheus.Registry, tenant, project string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != "heteroflow_billing_budget_used_ratio" {
			continue
		}
		for _, m := range mf.GetMetric() {
			got := map[string]string{}
			for _, lp := range m.GetLabel() {
				got[lp.GetName()] = lp.GetValue()
			}
			if got["tenant"] == tenant && got["project"] == project {
				return m.GetGauge().GetValue()
			}
		}
	}
	t.Fatalf("no budget gauge for %s/%s", tenant, project)
	return 0
}
