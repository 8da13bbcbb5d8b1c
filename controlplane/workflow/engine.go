package workflow

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/heteroflow/heteroflow/controlplane"
)

// Store is what the engine needs from persistence.
type Store interface {
	GetTask(ctx context.Context, id int64) (*controlplane.Task, error)
	TransitionTask(ctx context.Context, tr controlplane.Transition) (*controlplane.Task, error)
	GetTaskSchedule(ctx context.Context, taskID int64) (*controlplane.TaskSchedule, error)
	PutTaskSchedule(ctx context.Context, s *controlplane.TaskSchedule) error
	AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (bool, error)
	ReleaseLease(ctx context.Context, name, holder string) error
	controlplane.WorkflowStore
}

// LeaseName is the engine's leader lease: one server advances workflows.
const LeaseName = "workflows"

// Options configure an Engine.
type Options struct {
	Store    Store
	Logger   *slog.Logger
	Registry prometheus.Registerer
	// Tick is how often active workflows are advanced (default 1s);
	// LeaseTTL how long a silent leader keeps the lease (default 15s).
	Tick     time.Duration
	LeaseTTL time.Duration
	Holder   string
	Now      func() time.Time
	// Audit receives an entry when a workflow ends.
	Audit func(*controlplane.AuditEntry)
}

// Engine advances workflows from their stored state.
type Engine struct {
	store  Store
	log    *slog.Logger
	tick   time.Duration
	ttl    time.Duration
	holder string
	now    func() time.Time
	audit  func(*controlplane.AuditEntry)
	m      *engineMetrics

	mu       sync.Mutex // one Tick at a time
	compiled map[int64]*Compiled
	kick     chan struct{}
}

type engineMetrics struct {
	released prometheus.Counter
	active   prometheus.Gauge
	ticks    prometheus.Histogram
}

// New builds an engine; Run starts it.
func New(o Options) (*Engine, error) {
	if o.Store == nil {
		return nil, errors.New("workflow: Store is required")
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Registry == nil {
		o.Registry = prometheus.NewRegistry()
	}
	if o.Tick <= 0 {
		o.Tick = time.Second
	}
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = 15 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Holder == "" {
		host, _ := os.Hostname()
		o.Holder = host + "/" + rand.Text()[:12]
	}
	m := &engineMetrics{
		released: prometheus.NewCounter(prometheus.CounterOpts{Name: "heteroflow_workflow_steps_released_total",
			Help: "Workflow steps whose task was created."}),
		active: prometheus.NewGauge(prometheus.GaugeOpts{Name: "heteroflow_workflows_active",
			Help: "Workflows pending or running (or stopping their steps), as of the last tick."}),
		ticks: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "heteroflow_workflow_tick_seconds",
			Help: "Duration of one engine pass over the active workflows.", Buckets: prometheus.DefBuckets}),
	}
	for _, c := range []prometheus.Collector{m.released, m.active, m.ticks} {
		if err := o.Registry.Register(c); err != nil {
			return nil, fmt.Errorf("workflow metrics: %w", err)
		}
	}
	return &Engine{store: o.Store, log: o.Logger, tick: o.Tick, ttl: o.LeaseTTL, holder: o.Holder, now: o.Now,
		audit: o.Audit, m: m, compiled: map[int64]*Compiled{}, kick: make(chan struct{}, 1)}, nil
}

// Kick asks for a tick now (after a submit, cancel or retry), so a leader
// on this server reacts without waiting for the next interval.
func (e *Engine) Kick() {
	select {
	case e.kick <- struct{}{}:
	default:
	}
}

// Run campaigns for the lease and, while leader, ticks until ctx ends.
func (e *Engine) Run(ctx context.Context) {
	t := time.NewTicker(e.tick)
	defer t.Stop()
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = e.store.ReleaseLease(rctx, LeaseName, e.holder)
	}()
	var renewed time.Time
	leader := false
	for {
		if now := e.now(); now.Sub(renewed) >= e.ttl/3 || !leader {
			ok, err := e.store.AcquireLease(ctx, LeaseName, e.holder, e.ttl)
			if err != nil && ctx.Err() == nil {
				e.log.Warn("workflow lease", "err", err)
			}
			if ok && !leader {
				e.log.Info("workflow engine: leader", "holder", e.holder)
			}
			leader = ok && err == nil
			if leader {
				renewed = now
			}
		}
		if leader {
			if err := e.Tick(ctx); err != nil && ctx.Err() == nil {
				e.log.Warn("workflow tick", "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-e.kick:
		}
	}
}

// Tick advances every active workflow once. Exported for tests, which
// drive ticks by hand. One workflow's error does not stop the others.
func (e *Engine) Tick(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	start := time.Now()
	defer func() { e.m.ticks.Observe(time.Since(start).Seconds()) }()
	seen := map[int64]bool{}
	var errs []error
	for offset := 0; ; offset += controlplane.MaxPageLimit {
		wfs, total, err := e.store.ListWorkflows(ctx, controlplane.WorkflowFilter{Active: true,
			Page: controlplane.Page{Limit: controlplane.MaxPageLimit, Offset: offset}})
		if err != nil {
			return err
		}
		for _, w := range wfs {
			seen[w.ID] = true
			if err := e.advanceOne(ctx, w); err != nil {
				errs = append(errs, fmt.Errorf("workflow %d: %w", w.ID, err))
			}
		}
		if offset+len(wfs) >= total || len(wfs) == 0 {
			break
		}
	}
	for id := range e.compiled {
		if !seen[id] {
			delete(e.compiled, id)
		}
	}
	e.m.active.Set(float64(len(seen)))
	return errors.Join(errs...)
}

func (e *Engine) advanceOne(ctx context.Context, w *controlplane.Workflow) error {
	c, ok := e.compiled[w.ID]
	if !ok {
		var err error
		if c, err = Load(w); err != nil {
			// A stored spec that no longer compiles (it did at submit):
			// fail the workflow rather than retry it forever.
			_, uerr := e.store.UpdateWorkflow(ctx, controlplane.WorkflowUpdate{WorkflowID: w.ID, From: w.State,
				To: controlplane.WorkflowFailed, Reason: "spec: " + err.Error(), Actor: Actor})
			return errors.Join(err, uerr)
		}
		e.compiled[w.ID] = c
	}
	return e.advance(ctx, w, c)
}

func (e *Engine) auditEnd(w *controlplane.Workflow, to controlplane.WorkflowState, reason string) {
	if e.audit == nil {
		return
	}
	level := controlplane.LevelInfo
	if to != controlplane.WorkflowSucceeded {
		level = controlplane.LevelWarn
	}
	e.audit(&controlplane.AuditEntry{At: e.now(), Actor: Actor, Module: controlplane.ModuleScheduler, Level: level,
		Action: "workflow." + string(to), Target: fmt.Sprintf("workflow/%d", w.ID), Result: "ok", Detail: reason})
}
