package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/heteroflow/heteroflow/alerts"
	"github.com/heteroflow/heteroflow/alerts/notify"
	"github.com/heteroflow/heteroflow/controlplane/agentapi"
	"github.com/heteroflow/heteroflow/controlplane/httpapi"
	"github.com/heteroflow/heteroflow/controlplane/hub"
	"github.com/heteroflow/heteroflow/controlplane/metering"
	"github.com/heteroflow/heteroflow/controlplane/retention"
	"github.com/heteroflow/heteroflow/controlplane/scheduling"
	"github.com/heteroflow/heteroflow/controlplane/scheduling/schedulingapi"
	"github.com/heteroflow/heteroflow/controlplane/server"
	"github.com/heteroflow/heteroflow/controlplane/workflow"
	"github.com/heteroflow/heteroflow/deploy"
	"github.com/heteroflow/heteroflow/scheduler/framework"
)

// App is the assembled control plane: the core server with the agent API
// and the scheduler attached.
type App struct {
	srv    *server.Server
	opts   options
	agents *agentapi.Service
	sched  *scheduling.Service
	alerts *alerts.Engine
	notify *notify.Worker
	flows  *workflow.Engine // nil when the store has no workflow tables
	meter  *metering.Service
	prune  *retention.Pruner // nil when the store cannot prune
	hub    *hub.Hub          // nil unless hub.enabled
	holder string            // this server in every lease (newHolder)

	mu      sync.Mutex
	stop    context.CancelFunc // ends the background loops; nil before Start
	loops   sync.WaitGroup
	stopped bool
}

// Option customises the assembled control plane beyond its configuration
// file: what a program that imports HeteroFlow as a library adds.
type Option func(*options)

type options struct {
	plugins framework.Registry
}

// WithPlugin adds an out-of-tree scheduler plugin under name, the way
// kube-scheduler's app.WithPlugin does; a scheduling profile (the
// scheduling.profile file) enables it by that name. A name that clashes
// with a built-in plugin makes New fail.
func WithPlugin(name string, f framework.Factory) Option {
	return func(o *options) {
		if o.plugins == nil {
			o.plugins = framework.Registry{}
		}
		o.plugins[name] = f
	}
}

// New opens the stores and mounts every route; nothing listens until
// Start. On error everything opened so far is closed again.
func New(ctx context.Context, cfg server.Config, o server.Options, opts ...Option) (*App, error) {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	var extra options
	for _, opt := range opts {
		opt(&extra)
	}
	s, err := server.New(ctx, cfg, o)
	if err != nil {
		return nil, err
	}
	a := &App{srv: s, opts: extra, holder: newHolder()}
	err = a.attach(ctx, o.Logger)
	if err == nil {
		err = a.attachHub(o.Logger, o.Version)
	}
	if err != nil {
		_ = s.Shutdown(context.Background())
		return nil, err
	}
	return a, nil
}

// attach mounts the node-agent API (enrollment, heartbeats, assignments,
// node management, the agent binary download and the deploy script) and
// the scheduler's API. LoadAware reads live utilisation through the
// server's PromQL querier (embedded TSDB or the remote store).
func (a *App) attach(ctx context.Context, log *slog.Logger) error {
	agents, err := agentapi.Attach(ctx, a.srv.API(), a.srv.Store(), agentapi.AttachOptions{Logger: log,
		DeployScript: deploy.AgentScript, CA: a.srv.CA(), SigningKey: a.srv.SigningKey(), Recheck: a.pollRecheck()})
	if err != nil {
		return err
	}
	st, ok := a.srv.Store().(scheduling.Store)
	if !ok {
		return fmt.Errorf("scheduling: the %T store has no scheduling tables yet", a.srv.Store())
	}
	cfg, err := schedulingConfig(a.srv.Config().Scheduling)
	if err != nil {
		return err
	}
	cfg.LeaseTTL = a.leaseTTL()
	sched, err := scheduling.New(scheduling.Options{Store: st, Config: cfg, Logger: log, Registry: a.srv.API().Registry(),
		Notifier: agents, Sampler: a.srv.Querier(), Audit: a.srv.Auditor().Record,
		Gate: a.budgetGate, Plugins: a.opts.plugins, Holder: a.holder})
	if err != nil {
		return err
	}
	schedulingapi.Mount(a.srv.API(), sched, a.srv.Store())
	a.agents, a.sched = agents, sched
	if err := a.attachAlerts(log); err != nil {
		return err
	}
	if err := a.attachWorkflows(log); err != nil {
		return err
	}
	if err := a.attachBilling(log); err != nil {
		return err
	}
	return a.attachRetention(log)
}

// attachWorkflows mounts /api/v1/workflows and builds the workflow engine
// (it campaigns for its own lease, so one server advances workflows).
func (a *App) attachWorkflows(log *slog.Logger) error {
	st, ok := a.srv.Store().(workflow.Store)
	if !ok {
		return nil
	}
	eng, err := workflow.New(workflow.Options{Store: st, Logger: log, Registry: a.srv.API().Registry(),
		Audit: a.srv.Auditor().Record, LeaseTTL: a.leaseTTL(), Holder: a.holder})
	if err != nil {
		return err
	}
	a.srv.API().RegisterWorkflows(st, eng.Kick)
	a.flows = eng
	return nil
}

// API is the one REST API every subsystem mounted its routes on.
func (a *App) API() *httpapi.API { return a.srv.API() }

// Server is the core server (store, querier, bound addresses).
func (a *App) Server() *server.Server { return a.srv }

// APIAddr is the API listener's bound address once started ("" before).
func (a *App) APIAddr() string { return a.srv.APIAddr() }

// Start opens the listeners and starts the agent sweeper and the
// scheduler (which campaigns for the leader lease) in the background.
func (a *App) Start() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stop != nil || a.stopped {
		return errors.New("app: already started or shut down")
	}
	if err := a.srv.Start(); err != nil {
		return err
	}
	// The loops outlive New's context on purpose: only Shutdown ends them,
	// so that they stop before the store closes.
	ctx, stop := context.WithCancel(context.Background())
	a.stop = stop
	a.loops.Add(4)
	go func() { defer a.loops.Done(); a.agents.Run(ctx) }()
	go func() { defer a.loops.Done(); a.sched.Run(ctx) }()
	go func() { defer a.loops.Done(); a.alerts.Run(ctx) }()
	go func() { defer a.loops.Done(); a.notify.Run(ctx) }()
	if a.flows != nil {
		a.loops.Add(1)
		go func() { defer a.loops.Done(); a.flows.Run(ctx) }()
	}
	a.loops.Add(1)
	go func() { defer a.loops.Done(); a.meter.Run(ctx) }()
	a.startRetention(ctx)
	a.startHub(ctx)
	return nil
}

// Shutdown stops the loops and waits for them (the scheduler releases its
// lease on the way out), then stops the listeners, letting in-flight
// requests finish within ctx, and closes the stores. Safe to call once
// after New or Start; later calls are no-ops.
func (a *App) Shutdown(ctx context.Context) error {
	a.mu.Lock()
	if a.stopped {
		a.mu.Unlock()
		return nil
	}
	a.stopped = true
	stop := a.stop
	a.mu.Unlock()
	if stop != nil {
		stop()
		a.loops.Wait()
	}
	return a.srv.Shutdown(ctx)
}

// Run starts the control plane and blocks until ctx ends (SIGINT/SIGTERM
// in the command), then shuts down within cfg.ShutdownTimeout.
func Run(ctx context.Context, cfg server.Config, o server.Options, opts ...Option) error {
	a, err := New(ctx, cfg, o, opts...)
	if err != nil {
		return err
	}
	if err := a.Start(); err != nil {
		_ = a.Shutdown(context.Background())
		return err
	}
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), time.Duration(cfg.ShutdownTimeout))
	defer cancel()
	return a.Shutdown(sctx)
}
