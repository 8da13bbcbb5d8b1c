package alerts_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb"
	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/alerts"
	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/metricstore/query"
	"github.com/heteroflow/heteroflow/controlplane/sqlite"
)

// env is a TSDB with a PromQL querier and a SQLite store, as the server
// wires them in embedded mode.
type env struct {
	t     testing.TB
	db    *tsdb.DB
	q     query.Querier
	store *sqlite.DB
	t0    time.Time
}

func newEnv(t testing.TB) *env {
	t.Helper()
	opts := tsdb.DefaultOptions()
	opts.OutOfOrderTimeWindow = int64(time.Hour / time.Millisecond)
	db, err := tsdb.Open(t.TempDir(), nil, nil, opts, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	eng := promql.NewEngine(promql.EngineOpts{MaxSamples: 1e7, Timeout: time.Minute, LookbackDelta: 5 * time.Minute})
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "hf.db"), sqlite.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	return &env{t: t, db: db, q: query.NewEmbedded(eng, db), store: st,
		t0: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)}
}

func (e *env) engine(mod func(*alerts.Options)) *alerts.Engine {
	o := alerts.Options{Store: e.store, Querier: e.q, Appendable: e.db, Queryable: e.db, Interval: time.Minute,
		Logger: slog.New(slog.DiscardHandler)}
	if mod != nil {
		mod(&o)
	}
	en, err := alerts.New(o)
	require.NoError(e.t, err)
	return en
}

// util writes one GPU utilisation sample per device at minute m.
func (e *env) util(m int, vals ...float64) {
	app := e.db.AppenderV2(context.Background())
	for i, v := range vals {
		ls := labels.FromStrings("__name__", "hw_gpu_utilization_ratio", "host_name", "gpu-1", "hw_index", string(rune('0'+i)), "hw_vendor", "nvidia")
		_, err := app.Append(0, ls, 0, e.at(m).UnixMilli(), v, nil, nil, storage.AOptions{})
		require.NoError(e.t, err)
	}
	require.NoError(e.t, app.Commit())
}

func (e *env) at(m int) time.Time { return e.t0.Add(time.Duration(m) * time.Minute) }

func (e *env) alerts(f controlplane.AlertFilter) []*controlplane.AlertInstance {
	list, _, err := e.store.ListAlerts(context.Background(), f)
	require.NoError(e.t, err)
	return list
}

func (e *env) open(rule string) []*controlplane.AlertInstance {
	return e.alerts(controlplane.AlertFilter{Rule: rule,
		States: []controlplane.AlertState{controlplane.AlertActive, controlplane.AlertAcknowledged}})
}

// run writes load for minutes [from, to) and evaluates each minute.
func (e *env) run(en *alerts.Engine, from, to int, load ...float64) {
	for m := from; m < to; m++ {
		e.util(m, load...)
		require.NoError(e.t, en.EvalAt(context.Background(), e.at(m)))
	}
}

// TestLifecycle: load above 85% goes pending, fires after `for` (10m) as
// ACTIVE with a queued notification, is acknowledged, resolves by itself
// when the load falls, and a new rise opens a new instance.
func TestLifecycle(t *testing.T) {
	e := newEnv(t)
	ch := &controlplane.NotifyChannel{Name: "hook", Type: controlplane.ChannelWebhook, Enabled: true, SendResolved: true,
		Config: map[string]string{"url": "http://127.0.0.1:1/"}}
	require.NoError(t, e.store.CreateChannel(t.Context(), ch))
	en := e.engine(nil)
	e.run(en, 0, 5, 0.3)
	require.Empty(t, e.open("GPUHighLoad"))
	// At 0.9 the 5-minute average passes 0.85 at minute 9 (pending), so
	// the WARN fires 10 minutes later, at minute 19.
	e.run(en, 5, 19, 0.9)
	require.Empty(t, e.open("GPUHighLoad"), "still pending")
	e.run(en, 19, 20, 0.9)
	open := e.open("GPUHighLoad")
	require.Len(t, open, 1)
	a := open[0]
	require.Equal(t, controlplane.AlertWarn, a.Level)
	require.Equal(t, controlplane.AlertActive, a.State)
	require.Equal(t, "gpu-1", a.Node)
	require.Equal(t, "GPU 0 on gpu-1 busy 90%", a.Annotations["summary"])
	require.True(t, a.FiredAt.Equal(e.at(19)), "fired at %s", a.FiredAt)
	require.True(t, a.ActiveAt.Equal(e.at(9)), "active since %s", a.ActiveAt)
	ns, _, err := e.store.ListNotifications(t.Context(), controlplane.NotificationFilter{AlertID: a.ID})
	require.NoError(t, err)
	require.Len(t, ns, 1)

	// ALERTS is in the TSDB, as Prometheus writes it.
	v, err := e.q.Instant(t.Context(), `ALERTS{alertname="GPUHighLoad",alertstate="firing"}`, e.at(19))
	require.NoError(t, err)
	require.Len(t, v, 1)

	_, err = e.store.AckAlert(t.Context(), a.ID, "alice", "on it", e.at(20))
	require.NoError(t, err)
	e.run(en, 20, 25, 0.9)
	open = e.open("GPUHighLoad")
	require.Len(t, open, 1, "acknowledging changes nothing the evaluator computes")
	require.Equal(t, controlplane.AlertAcknowledged, open[0].State)

	e.run(en, 25, 31, 0.1) // the 5-minute average falls below 0.85 at minute 27
	require.Empty(t, e.open("GPUHighLoad"))
	got, err := e.store.GetAlert(t.Context(), a.ID)
	require.NoError(t, err)
	require.Equal(t, controlplane.AlertResolved, got.State)
	require.Equal(t, "condition cleared", got.Resolution)
	require.Empty(t, got.ResolvedBy)
	ns, _, err = e.store.ListNotifications(t.Context(), controlplane.NotificationFilter{AlertID: a.ID})
	require.NoError(t, err)
	require.Len(t, ns, 2, "firing and resolved")

	e.run(en, 31, 50, 0.9)
	again := e.open("GPUHighLoad")
	require.Len(t, again, 1)
	require.NotEqual(t, a.ID, again[0].ID, "a new firing is a new instance")
}

// TestRestoreForState: a server restart during `for` keeps the pending
// progress (Prometheus' ALERTS_FOR_STATE restore: the downtime does not
// count), and a restart while firing neither duplicates the instance nor
// queues a second notification.
func TestRestoreForState(t *testing.T) {
	e := newEnv(t)
	ch := &controlplane.NotifyChannel{Name: "hook", Type: controlplane.ChannelWebhook, Enabled: true, Config: map[string]string{"url": "http://x"}}
	require.NoError(t, e.store.CreateChannel(t.Context(), ch))
	en := e.engine(nil)
	e.run(en, 0, 5, 0.3)
	e.run(en, 5, 14, 0.9) // pending since minute 9: 4 of 10 minutes done at 13
	// The server is down for minutes 14 and 15 (metrics still arrive).
	e.util(14, 0.9)
	e.util(15, 0.9)
	en2 := e.engine(nil)
	// 6 minutes remain after the restart at 16: fires at 22, not at 26 as
	// a fresh `for` would, nor at 19 as if the downtime had counted.
	e.run(en2, 16, 22, 0.9)
	require.Empty(t, e.open("GPUHighLoad"))
	e.run(en2, 22, 23, 0.9)
	require.Len(t, e.open("GPUHighLoad"), 1)

	en3 := e.engine(nil) // restart while firing
	e.run(en3, 23, 30, 0.9)
	all := e.alerts(controlplane.AlertFilter{Rule: "GPUHighLoad"})
	require.Len(t, all, 1, "no duplicate instance")
	ns, total, err := e.store.ListNotifications(t.Context(), controlplane.NotificationFilter{})
	require.NoError(t, err)
	require.Equal(t, 1, total, "no duplicate notification: %v", ns)
}

// TestParams: a threshold changed without PromQL rewrites the rule.
func TestParams(t *testing.T) {
	e := newEnv(t)
	en := e.engine(nil)
	ps, err := en.Params(t.Context())
	require.NoError(t, err)
	byKey := map[string]alerts.ParamState{}
	for _, p := range ps {
		byKey[p.Key] = p
	}
	require.Equal(t, "0.85", byKey["gpu_load_warn"].Default)
	require.Equal(t, "10m", byKey["gpu_load_warn_for"].Default)
	require.Equal(t, "0.95", byKey["gpu_load_error"].Value)
	for _, p := range alerts.Params {
		require.NotEmpty(t, byKey[p.Key].Default, "parameter %s addresses no shipped rule", p.Key)
	}

	require.ErrorIs(t, en.SetParams(t.Context(), alerts.ParamValues{"gpu_load_warn": "lots"}), controlplane.ErrInvalid)
	require.ErrorIs(t, en.SetParams(t.Context(), alerts.ParamValues{"gpu_load_warn": "7"}), controlplane.ErrInvalid)
	require.ErrorIs(t, en.SetParams(t.Context(), alerts.ParamValues{"nope": "1"}), controlplane.ErrInvalid)
	require.ErrorIs(t, en.SetParams(t.Context(), alerts.ParamValues{"gpu_load_warn_for": "soon"}), controlplane.ErrInvalid)
	require.NoError(t, en.SetParams(t.Context(), alerts.ParamValues{"gpu_load_warn": "0.5", "gpu_load_warn_for": "2m"}))

	gs, err := en.Groups(t.Context())
	require.NoError(t, err)
	var exprs []string
	for _, g := range gs {
		for _, r := range g.AlertingRules() {
			if r.Name() == "GPUHighLoad" && r.Labels().Get("severity") == "WARN" {
				exprs = append(exprs, r.Query().String())
				require.Equal(t, 2*time.Minute, r.HoldDuration())
			}
		}
	}
	require.Equal(t, []string{"avg_over_time(hw_gpu_utilization_ratio[5m]) > 0.5"}, exprs)

	e.run(en, 0, 4, 0.6) // above 0.5 from the start: pending at 0, firing at 2
	require.Len(t, e.open("GPUHighLoad"), 1)

	require.NoError(t, en.SetParams(t.Context(), alerts.ParamValues{"gpu_load_warn": ""}))
	ps, err = en.Params(t.Context())
	require.NoError(t, err)
	for _, p := range ps {
		if p.Key == "gpu_load_warn" {
			require.Equal(t, "0.85", p.Value, "an empty value restores the default")
		}
	}
}

// TestCustomRules: a tenant's rule is validated like a rule file, then
// evaluated with its level and tenant; disabling it resolves its alerts.
func TestCustomRules(t *testing.T) {
	e := newEnv(t)
	bad := &controlplane.AlertRule{Name: "Busy", Expr: "hw_gpu_utilization_ratio >", Level: controlplane.AlertWarn}
	err := alerts.ValidateRule(bad)
	require.ErrorIs(t, err, controlplane.ErrInvalid)
	require.Contains(t, err.Error(), "unexpected end of input")
	bad = &controlplane.AlertRule{Name: "Busy", Expr: "up", Level: controlplane.AlertWarn, Annotations: map[string]string{"summary": "{{ $labels.x "}}
	require.ErrorIs(t, alerts.ValidateRule(bad), controlplane.ErrInvalid)
	bad.Annotations["summary"] = strings.Repeat("x", controlplane.MaxRuleTemplateLen+1)
	require.ErrorContains(t, alerts.ValidateRule(bad), "oversize")

	r := &controlplane.AlertRule{Tenant: "ml", Name: "AnyGPUBusy", Expr: "hw_gpu_utilization_ratio > 0.2", Level: controlplane.AlertError,
		Enabled: true, Annotations: map[string]string{"summary": "{{ $labels.host_name }} at {{ $value }}"}}
	require.NoError(t, alerts.ValidateRule(r))
	require.NoError(t, e.store.CreateAlertRule(t.Context(), r))
	en := e.engine(nil)
	e.run(en, 0, 2, 0.3, 0.1)
	open := e.open("AnyGPUBusy")
	require.Len(t, open, 1)
	require.Equal(t, controlplane.AlertError, open[0].Level)
	require.Equal(t, "ml", open[0].Tenant)
	require.Equal(t, r.ID, open[0].RuleID)
	require.Equal(t, "gpu-1 at 0.3", open[0].Annotations["summary"])

	r.Enabled = false
	require.NoError(t, e.store.UpdateAlertRule(t.Context(), r))
	e.run(en, 2, 3, 0.3, 0.1)
	require.Empty(t, e.open("AnyGPUBusy"))
	all := e.alerts(controlplane.AlertFilter{Rule: "AnyGPUBusy"})
	require.Equal(t, "rule removed or disabled", all[0].Resolution)
}

// TestSilence: a silenced alert is stored but queues no notification.
func TestSilence(t *testing.T) {
	e := newEnv(t)
	ch := &controlplane.NotifyChannel{Name: "hook", Type: controlplane.ChannelWebhook, Enabled: true, Config: map[string]string{"url": "http://x"}}
	require.NoError(t, e.store.CreateChannel(t.Context(), ch))
	require.NoError(t, e.store.CreateSilence(t.Context(), &controlplane.Silence{StartsAt: e.at(0), EndsAt: e.at(60),
		Matchers: []controlplane.LabelMatcher{{Name: "host_name", Op: controlplane.MatchEqual, Value: "gpu-1"}}}))
	require.NoError(t, e.store.CreateAlertRule(t.Context(), &controlplane.AlertRule{Name: "Busy", Expr: "hw_gpu_utilization_ratio > 0.2",
		Level: controlplane.AlertInfo, Enabled: true}))
	en := e.engine(nil)
	e.run(en, 0, 2, 0.3)
	open := e.open("Busy")
	require.Len(t, open, 1)
	require.True(t, open[0].Silenced)
	_, total, err := e.store.ListNotifications(t.Context(), controlplane.NotificationFilter{})
	require.NoError(t, err)
	require.Zero(t, total)
}

// TestFollowerDoesNotEvaluate: only the leader opens instances.
func TestFollowerDoesNotEvaluate(t *testing.T) {
	e := newEnv(t)
	require.NoError(t, e.store.CreateAlertRule(t.Context(), &controlplane.AlertRule{Name: "Busy", Expr: "hw_gpu_utilization_ratio > 0.2",
		Level: controlplane.AlertInfo, Enabled: true}))
	leader := false
	en := e.engine(func(o *alerts.Options) {
		o.Leader = func() bool { return leader }
		o.Interval = 20 * time.Millisecond
	})
	e.util(0, 0.5)
	e.util(1, 0.5)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); en.Run(ctx) }()
	time.Sleep(100 * time.Millisecond)
	require.Empty(t, e.open("Busy"), "a follower evaluates nothing")
	cancel()
	<-done
	require.NoError(t, en.EvalAt(t.Context(), e.at(1)))
	require.Len(t, e.open("Busy"), 1)
}

// TestTestRule: "test this rule now" reports what would fire against
// live data, over the rule's `for`, without storing anything.
func TestTestRule(t *testing.T) {
	e := newEnv(t)
	for m := 0; m <= 10; m++ {
		e.util(m, 0.9, 0.1)
	}
	en := e.engine(nil)
	r := &controlplane.AlertRule{Name: "Busy", Expr: "hw_gpu_utilization_ratio > 0.5", For: 5 * time.Minute,
		Level: controlplane.AlertWarn, Annotations: map[string]string{"summary": "{{ $labels.hw_index }} {{ $value }}"}}
	got, err := en.TestRule(t.Context(), r, e.at(10))
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, "firing", got[0].State, "above the threshold for the whole `for`")
	require.Equal(t, "0 0.9", got[0].Annotations["summary"])
	got, err = en.TestRule(t.Context(), r, e.at(2)) // the data starts at 0: only 2 of 5 minutes
	require.NoError(t, err)
	require.Equal(t, "pending", got[0].State)
	_, err = en.TestRule(t.Context(), &controlplane.AlertRule{Name: "X", Expr: "rate(up)", Level: controlplane.AlertWarn}, e.at(10))
	require.ErrorIs(t, err, controlplane.ErrInvalid)
	require.Empty(t, e.alerts(controlplane.AlertFilter{}), "a test stores nothing")
}
