package alerts

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	promrules "github.com/prometheus/prometheus/rules"
	"github.com/prometheus/prometheus/storage"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/metricstore/query"
)

var nopLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

// Store is what the engine needs from persistence: settings (parameters)
// and the alert tables.
type Store interface {
	GetSetting(ctx context.Context, key string) (string, error)
	PutSetting(ctx context.Context, key, value string) error
	controlplane.AlertStore
}

// Options configure an Engine.
type Options struct {
	Store   Store
	Querier query.Querier
	// Appendable receives rule output (recording rules, ALERTS and
	// ALERTS_FOR_STATE); nil discards it.
	Appendable storage.AppendableV2
	// Queryable is read to restore `for` state (ALERTS_FOR_STATE); nil
	// skips the restore (pending alerts then start over).
	Queryable storage.Queryable
	// Interval between evaluations (default 15s).
	Interval time.Duration
	// RulesDir adds the Prometheus rule files found there ("" = none).
	RulesDir    string
	ExternalURL string
	Logger      *slog.Logger
	Registerer  prometheus.Registerer
	Now         func() time.Time
	// Leader reports whether this server runs the engine (the scheduler
	// lease); nil = always.
	Leader func() bool
	// OutageTolerance bounds how old ALERTS_FOR_STATE may be to restore
	// from (default 1h); ForGracePeriod is Prometheus' minimum time left
	// before a restored alert fires (default 0: fire as it would have).
	OutageTolerance time.Duration
	ForGracePeriod  time.Duration
	// ResendDelay is how often Prometheus resends firing alerts (1m).
	ResendDelay time.Duration
	// Resend receives Prometheus' notifications (new, repeated and
	// resolved alerts, at ResendDelay) for Alertmanager channels; nil = none.
	Resend func(ctx context.Context, alerts []*promrules.Alert)
	// Queued is called after an evaluation queued notifications (to wake
	// the delivery worker); nil = none.
	Queued func()
	// Audit receives the engine's state changes; nil = none.
	Audit func(*controlplane.AuditEntry)
}

// group is one evaluated rule group with its bookkeeping.
type group struct {
	key      string
	origin   string
	g        *promrules.Group
	lastEval time.Time
	restored bool
}

// Engine evaluates the rules and keeps the alert instances in the store.
type Engine struct {
	o      Options
	log    *slog.Logger
	parser parser.Parser
	mopts  *promrules.ManagerOptions

	mu       sync.Mutex // guards everything below
	groups   []*group
	defaults map[string]string
	params   ParamValues
	sig      string
	loaded   bool
	leader   bool
	open     map[string]*controlplane.AlertInstance // fingerprint → open instance (leader only)
	sends    []*promrules.Alert
	lastErr  error
}

// New builds an engine; Run starts it.
func New(o Options) (*Engine, error) {
	if o.Store == nil || o.Querier == nil {
		return nil, errors.New("alerts: Store and Querier are required")
	}
	if o.Interval <= 0 {
		o.Interval = 15 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Registerer == nil {
		o.Registerer = prometheus.NewRegistry()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Leader == nil {
		o.Leader = func() bool { return true }
	}
	if o.OutageTolerance <= 0 {
		o.OutageTolerance = time.Hour
	}
	if o.ResendDelay <= 0 {
		o.ResendDelay = time.Minute
	}
	if o.Appendable == nil {
		o.Appendable = discard{}
	}
	e := &Engine{o: o, log: o.Logger, parser: newParser(), open: map[string]*controlplane.AlertInstance{}}
	var ext *url.URL
	if o.ExternalURL != "" {
		u, err := url.Parse(o.ExternalURL)
		if err != nil {
			return nil, fmt.Errorf("alerts: external URL: %w", err)
		}
		ext = u
	}
	e.mopts = &promrules.ManagerOptions{
		ExternalURL: ext, QueryFunc: e.queryFunc, NotifyFunc: e.notifyFunc, Context: context.Background(),
		AppendableV2: o.Appendable, Queryable: o.Queryable, Logger: o.Logger.With("component", "rules"),
		Metrics: promrules.NewGroupMetrics(o.Registerer), OutageTolerance: o.OutageTolerance,
		ForGracePeriod: o.ForGracePeriod, ResendDelay: o.ResendDelay, Parser: e.parser,
	}
	return e, nil
}

// queryFunc runs a rule's instant query through the one Querier, in
// PromQL's own types where the Querier answers in them (embedded mode).
func (e *Engine) queryFunc(ctx context.Context, q string, t time.Time) (promql.Vector, error) {
	if vq, ok := e.o.Querier.(query.VectorQuerier); ok {
		return vq.InstantVector(ctx, q, t)
	}
	v, err := e.o.Querier.Instant(ctx, q, t)
	if err != nil {
		return nil, err
	}
	return toPromQL(v), nil
}

func toPromQL(v model.Vector) promql.Vector {
	out := make(promql.Vector, 0, len(v))
	for _, s := range v {
		b := labels.NewScratchBuilder(len(s.Metric))
		for k, val := range s.Metric {
			b.Add(string(k), string(val))
		}
		b.Sort()
		out = append(out, promql.Sample{Metric: b.Labels(), T: int64(s.Timestamp), F: float64(s.Value)})
	}
	return out
}

// notifyFunc collects what Prometheus would send to an Alertmanager.
func (e *Engine) notifyFunc(_ context.Context, _ string, alerts ...*promrules.Alert) {
	e.sends = append(e.sends, alerts...) // under e.mu: Eval runs inside EvalAt
}

// Params returns every parameter with its default and current value.
func (e *Engine) Params(ctx context.Context) ([]ParamState, error) {
	v, err := e.loadParams(ctx)
	if err != nil {
		return nil, err
	}
	_, defaults, err := shippedFiles(nil, e.parser)
	if err != nil {
		return nil, err
	}
	out := make([]ParamState, len(Params))
	for i, p := range Params {
		val, ok := v[p.Key]
		if !ok {
			val = defaults[p.Key]
		}
		out[i] = ParamState{Param: p, Default: defaults[p.Key], Value: val}
	}
	return out, nil
}

// SetParams validates and stores v (merged over the stored values; an
// empty value returns a key to its default) and reloads the rules.
func (e *Engine) SetParams(ctx context.Context, v ParamValues) error {
	cur, err := e.loadParams(ctx)
	if err != nil {
		return err
	}
	for k, val := range v {
		if val == "" {
			delete(cur, k)
		} else {
			cur[k] = val
		}
	}
	if err := cur.Validate(); err != nil {
		return controlplane.InvalidCode(CodeInvalidParam, []string{"detail", err.Error()}, "%v", err)
	}
	if _, _, err := shippedFiles(cur, e.parser); err != nil {
		return controlplane.InvalidCode(CodeInvalidParam, []string{"detail", err.Error()}, "%v", err)
	}
	b, err := jsonString(cur)
	if err != nil {
		return err
	}
	if err := e.o.Store.PutSetting(ctx, SettingKey, b); err != nil {
		return err
	}
	return e.Reload(ctx)
}

func (e *Engine) loadParams(ctx context.Context) (ParamValues, error) {
	s, err := e.o.Store.GetSetting(ctx, SettingKey)
	if errors.Is(err, controlplane.ErrNotFound) {
		s, err = "", nil
	}
	if err != nil {
		return nil, err
	}
	return DecodeParams(s)
}

// Reload rebuilds the groups from the shipped files, the rules directory
// and the enabled custom rules, carrying each surviving rule's alerts over.
func (e *Engine) Reload(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.reloadLocked(ctx, true)
}

func (e *Engine) reloadLocked(ctx context.Context, force bool) error {
	paramsRaw, err := e.o.Store.GetSetting(ctx, SettingKey)
	if errors.Is(err, controlplane.ErrNotFound) {
		paramsRaw, err = "", nil
	}
	if err != nil {
		return err
	}
	custom, err := e.o.Store.ListAlertRules(ctx)
	if err != nil {
		return err
	}
	sig := sourceSignature(paramsRaw, custom)
	if !force && e.loaded && sig == e.sig {
		return nil
	}
	params, err := DecodeParams(paramsRaw)
	if err != nil {
		return err
	}
	files, defaults, err := shippedFiles(params, e.parser)
	if err != nil {
		return err
	}
	dir, err := dirFiles(e.o.RulesDir, e.parser)
	if err != nil {
		return err
	}
	cf, err := customFiles(ctx, e.o.Store, e.parser)
	if err != nil {
		return err
	}
	files = append(append(files, dir...), cf...)
	old := map[string]*group{}
	for _, g := range e.groups {
		old[g.key] = g
	}
	var next []*group
	for _, f := range files {
		for _, rg := range f.groups.Groups {
			key := promrules.GroupKey(f.ident, rg.Name)
			prev := old[key]
			// A group that replaces a restored one carries its state; a
			// group new to a leader that has restored starts restored.
			restored := e.loaded && (prev == nil || prev.restored)
			g, err := e.buildGroup(f.ident, rg, restored)
			if err != nil {
				return err
			}
			ng := &group{key: key, origin: f.origin, g: g, restored: restored}
			if prev != nil {
				g.CopyState(prev.g)
				ng.lastEval = prev.lastEval
			}
			next = append(next, ng)
		}
	}
	e.groups, e.defaults, e.params, e.sig, e.loaded = next, defaults, params, sig, true
	return nil
}

func (e *Engine) buildGroup(file string, rg rulefmtGroup, restored bool) (*promrules.Group, error) {
	itv := e.o.Interval
	if rg.Interval != 0 {
		itv = time.Duration(rg.Interval)
	}
	var rs []promrules.Rule
	for _, r := range rg.Rules {
		expr, err := e.parser.ParseExpr(r.Expr)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		lbl := promrules.FromMaps(rg.Labels, r.Labels)
		if r.Alert != "" {
			rs = append(rs, promrules.NewAlertingRule(r.Alert, expr, time.Duration(r.For), time.Duration(r.KeepFiringFor),
				lbl, labels.FromMap(r.Annotations), labels.EmptyLabels(), e.o.ExternalURL, restored, e.mopts.Logger))
			continue
		}
		rs = append(rs, promrules.NewRecordingRule(r.Record, expr, lbl))
	}
	return promrules.NewGroup(promrules.GroupOptions{Name: rg.Name, File: file, Interval: itv, Limit: rg.Limit,
		Rules: rs, ShouldRestore: !restored, Opts: e.mopts, QueryOffset: (*time.Duration)(rg.QueryOffset)}), nil
}

// Groups returns the loaded groups (for the rules API), loading them on
// first use.
func (e *Engine) Groups(ctx context.Context) ([]*promrules.Group, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.reloadLocked(ctx, false); err != nil {
		return nil, err
	}
	out := make([]*promrules.Group, len(e.groups))
	for i, g := range e.groups {
		out[i] = g.g
	}
	return out, nil
}

// Origin says where the group with key came from: shipped, file or custom.
func (e *Engine) Origin(key string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, g := range e.groups {
		if g.key == key {
			return g.origin
		}
	}
	return ""
}

// Run evaluates every Interval while this server is the leader, until ctx
// ends.
func (e *Engine) Run(ctx context.Context) {
	t := time.NewTicker(e.o.Interval)
	defer t.Stop()
	for {
		if e.o.Leader() {
			if err := e.EvalAt(ctx, e.o.Now()); err != nil && ctx.Err() == nil {
				e.log.Warn("alert evaluation", "err", err)
			}
		} else {
			e.StepDown()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// StepDown forgets the evaluation state (another server took over).
func (e *Engine) StepDown() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.leader {
		return
	}
	e.log.Info("alert engine: no longer the leader")
	e.leader, e.loaded, e.groups = false, false, nil
	e.open = map[string]*controlplane.AlertInstance{}
}

// takeOverLocked loads the open instances and fresh (unrestored) groups.
func (e *Engine) takeOverLocked(ctx context.Context) error {
	open := map[string]*controlplane.AlertInstance{}
	for off := 0; ; off += controlplane.MaxPageLimit {
		list, total, err := e.o.Store.ListAlerts(ctx, controlplane.AlertFilter{
			States: []controlplane.AlertState{controlplane.AlertActive, controlplane.AlertAcknowledged},
			Page:   controlplane.Page{Limit: controlplane.MaxPageLimit, Offset: off}})
		if err != nil {
			return err
		}
		for _, a := range list {
			open[a.Fingerprint] = a
		}
		if off+len(list) >= total || len(list) == 0 {
			break
		}
	}
	e.loaded, e.groups = false, nil
	if err := e.reloadLocked(ctx, true); err != nil {
		return err
	}
	e.open, e.leader = open, true
	e.log.Info("alert engine: leader", "groups", len(e.groups), "open_alerts", len(open))
	return nil
}

// EvalAt evaluates every group due at ts (all of them on the first call),
// restores `for` state after the first evaluation of a fresh group, then
// brings the stored instances in line with what fires.
func (e *Engine) EvalAt(ctx context.Context, ts time.Time) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.leader {
		if err := e.takeOverLocked(ctx); err != nil {
			return err
		}
	} else if err := e.reloadLocked(ctx, false); err != nil {
		e.log.Warn("alert rules reload", "err", err) // keep evaluating the last good rules
	}
	e.sends = e.sends[:0]
	for _, g := range e.groups {
		if !g.lastEval.IsZero() && ts.Sub(g.lastEval) < g.g.Interval() {
			continue
		}
		g.g.Eval(ctx, ts)
		g.lastEval = ts
		if !g.restored {
			if e.o.Queryable != nil {
				g.g.RestoreForState(ts)
			} else {
				for _, r := range g.g.AlertingRules() {
					r.SetRestored(true)
				}
			}
			g.restored = true
		}
	}
	queued, err := e.syncLocked(ctx, ts)
	if queued && e.o.Queued != nil {
		e.o.Queued()
	}
	if e.o.Resend != nil && len(e.sends) > 0 {
		e.o.Resend(ctx, append([]*promrules.Alert(nil), e.sends...))
	}
	e.lastErr = err
	return err
}

// present is what the rules of one alert name currently report.
type present struct {
	ok  bool                        // every rule of the name evaluated cleanly and is restored
	fps map[string]*promrules.Alert // pending or firing, by fingerprint
}

// Fingerprint identifies an alert's label set.
func Fingerprint(ls labels.Labels) string { return fmt.Sprintf("%016x", ls.Hash()) }

func (e *Engine) syncLocked(ctx context.Context, ts time.Time) (queued bool, _ error) {
	byName := map[string]*present{}
	allRestored := true
	var firing []*promrules.Alert
	for _, g := range e.groups {
		allRestored = allRestored && g.restored
		for _, r := range g.g.AlertingRules() {
			p := byName[r.Name()]
			if p == nil {
				p = &present{ok: true, fps: map[string]*promrules.Alert{}}
				byName[r.Name()] = p
			}
			p.ok = p.ok && g.restored && r.Health() == promrules.HealthGood
			for _, a := range r.ActiveAlerts() {
				p.fps[Fingerprint(a.Labels)] = a
				if a.State == promrules.StateFiring {
					firing = append(firing, a)
				}
			}
		}
	}
	chans, sils, err := e.routing(ctx)
	if err != nil {
		return false, err
	}
	var errs []error
	for _, a := range firing {
		fp := Fingerprint(a.Labels)
		if _, ok := e.open[fp]; ok {
			continue
		}
		inst := instanceOf(a, fp)
		inst.Silenced = silenced(sils, inst.Labels, ts)
		var notify []int64
		if !inst.Silenced {
			notify = routes(chans, inst, false)
		}
		cur, created, err := e.o.Store.OpenAlert(ctx, inst, notify)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		e.open[fp] = cur
		if created {
			queued = queued || len(notify) > 0
			e.audit("alert.fire", cur, "")
		}
	}
	for fp, inst := range e.open {
		p := byName[inst.Rule]
		reason := "condition cleared"
		switch {
		case p == nil && allRestored:
			reason = "rule removed or disabled"
		case p == nil || !p.ok:
			continue // not evaluated cleanly: keep it open
		case p.fps[fp] != nil:
			continue
		}
		var notify []int64
		if !inst.Silenced {
			notify = routes(chans, inst, true)
		}
		res, err := e.o.Store.ResolveAlert(ctx, inst.ID, "", reason, ts, notify)
		switch {
		case errors.Is(err, controlplane.ErrConflict), errors.Is(err, controlplane.ErrNotFound):
			// Resolved by hand meanwhile (perhaps on another server).
		case err != nil:
			errs = append(errs, err)
			continue
		default:
			queued = queued || len(notify) > 0
			e.audit("alert.resolve", res, reason)
		}
		delete(e.open, fp)
	}
	return queued, errors.Join(errs...)
}

func (e *Engine) routing(ctx context.Context) ([]*controlplane.NotifyChannel, []*controlplane.Silence, error) {
	chans, err := e.o.Store.ListChannels(ctx)
	if err != nil {
		return nil, nil, err
	}
	sils, err := e.o.Store.ListSilences(ctx)
	return chans, sils, err
}

// Routes lists the channels that receive inst (resolved: those that want
// resolved notifications too).
func routes(chans []*controlplane.NotifyChannel, inst *controlplane.AlertInstance, resolved bool) []int64 {
	var out []int64
	for _, c := range chans {
		if c.Routes(inst) && (!resolved || c.SendResolved) {
			out = append(out, c.ID)
		}
	}
	return out
}

// Routes is routes for the HTTP layer (hand resolution).
func Routes(chans []*controlplane.NotifyChannel, inst *controlplane.AlertInstance, resolved bool) []int64 {
	return routes(chans, inst, resolved)
}

func silenced(sils []*controlplane.Silence, lbl map[string]string, ts time.Time) bool {
	for _, s := range sils {
		if (s.Tenant == "" || s.Tenant == lbl[LabelTenant]) && s.Active(lbl, ts) {
			return true
		}
	}
	return false
}

// instanceOf maps a firing Prometheus alert onto a stored instance.
func instanceOf(a *promrules.Alert, fp string) *controlplane.AlertInstance {
	lbl, ann := a.Labels.Map(), a.Annotations.Map()
	inst := &controlplane.AlertInstance{Fingerprint: fp, Rule: lbl[labels.AlertName], Tenant: lbl[LabelTenant],
		Level: controlplane.ParseAlertLevel(lbl[LabelSeverity]), Labels: lbl, Annotations: ann, Value: a.Value,
		ActiveAt: a.ActiveAt, FiredAt: a.FiredAt}
	if inst.FiredAt.IsZero() {
		inst.FiredAt = a.ActiveAt
	}
	for _, k := range []string{"host_name", "hostname", "node"} {
		if v := lbl[k]; v != "" {
			inst.Node = v
			break
		}
	}
	if id, ok := lbl[LabelRuleID]; ok {
		_, _ = fmt.Sscan(id, &inst.RuleID)
	}
	return inst
}

func (e *Engine) audit(action string, a *controlplane.AlertInstance, detail string) {
	if e.o.Audit == nil {
		return
	}
	lvl := controlplane.LevelInfo
	if a.Level == controlplane.AlertError {
		lvl = controlplane.LevelWarn
	}
	e.o.Audit(&controlplane.AuditEntry{Actor: "system", Module: ModuleAlerts, Level: lvl, Action: action,
		Target: fmt.Sprintf("alert/%d", a.ID), Result: "ok", Detail: fmt.Sprintf("%s %s %s", a.Rule, a.Level, detail)})
}

// ModuleAlerts names the alert engine in the audit log.
const ModuleAlerts controlplane.AuditModule = "alerts"

// OpenAlerts returns the leader's open instances by fingerprint order (tests).
func (e *Engine) OpenAlerts() []*controlplane.AlertInstance {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]*controlplane.AlertInstance, 0, len(e.open))
	for _, a := range e.open {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Fingerprint < out[j].Fingerprint })
	return out
}
