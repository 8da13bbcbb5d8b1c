package scheduling

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
	"github.com/heteroflow/heteroflow/scheduler/framework"
	"github.com/heteroflow/heteroflow/scheduler/plugins"
)

// Store is what scheduling needs from persistence.
type Store interface {
	controlplane.Store
	controlplane.NodeStore
	controlplane.SchedulingStore
}

// Notifier wakes a node's assignment long-poll (agentapi.Service.NotifyNode).
type Notifier interface{ NotifyNode(nodeID string) }

// Options configure a Service.
type Options struct {
	Store  Store
	Config Config
	Logger *slog.Logger
	// Registry receives the heteroflow_ scheduling metrics.
	Registry prometheus.Registerer
	Notifier Notifier
	// Sampler feeds LoadAware (the metric store's PromQL querier); nil =
	// no live utilisation (LoadAware stays neutral).
	Sampler plugins.Sampler
	// Holder names this server in the leader lease (default host+uuid).
	Holder string
	Now    func() time.Time
	// Audit receives the audit entry of each scheduling decision (see
	// auditDecision); nil = decisions go to the debug log only.
	Audit func(*controlplane.AuditEntry)
	// Plugins are out-of-tree plugins added to the built-in ones; a profile
	// enables them by name like any other. A name that clashes with a
	// built-in is refused at New.
	Plugins framework.Registry
	// Gate is asked before admission of each submitted task (budgets' hard
	// stop): policy refuse fails the task with the reason, queue leaves it
	// submitted until the gate opens, "" admits. nil: no gate.
	Gate func(*controlplane.TaskSpec) (controlplane.QuotaPolicy, string)
}

// LeaseName is the leader lease of the scheduler.
const LeaseName = "scheduler"

// Service is the scheduler of the live cluster plus its API.
type Service struct {
	store  Store
	cfg    Config
	log    *slog.Logger
	m      *metrics
	notify Notifier
	sample plugins.Sampler
	audit  func(*controlplane.AuditEntry)
	extra  framework.Registry // out-of-tree plugins (Options.Plugins)
	gate   func(*controlplane.TaskSpec) (controlplane.QuotaPolicy, string)
	holder string
	now    func() time.Time

	mu       sync.Mutex // guards everything below (loop tick vs API)
	leader   bool
	snap     *snapshot
	fw       *framework.Framework
	backoff  map[int64]time.Time // task → next attempt
	attempts map[int64]int       // failed cycles per task
	waiting  map[string][]*pending
	held     heldAdmissions               // this tick's admissions not yet written (admit_bind.go)
	settings []controlplane.PluginSetting // applied
	lastTick time.Time
	quotas   []*controlplane.Quota
	pools    *poolTable         // tenants' dedicated node pools (pools.go)
	cur      *controlplane.Task // the task in Schedule, for the quota checker
	// preempted: preemptor → the victims it displaced, so a waiting
	// preemptor does not displace more while those are still stopping.
	preempted map[int64][]int64
	// shapes: recent task shapes, Fragmentation's target workload.
	shapes recentShapes
	defrag defragState // the defragmentation policy's runs and move window

	fleet     fleetShapes        // the submit-time never-fits check's cache (own lock)
	nodeReads backgroundNodeRead // the running loop's node reads (own lock)
	// unbound: single-task placements of this tick assumed in the cluster,
	// waiting for their bind batch (bind_batch.go).
	unbound []*pending
}

// New builds the service; Run starts it.
func New(o Options) (*Service, error) {
	if o.Store == nil {
		return nil, errors.New("scheduling: Store is required")
	}
	if err := o.Config.fill(); err != nil {
		return nil, err
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Registry == nil {
		o.Registry = prometheus.NewRegistry()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Holder == "" {
		host, _ := os.Hostname()
		o.Holder = host + "/" + rand.Text()[:12]
	}
	if err := registry(nil, nil).Merge(o.Plugins); err != nil {
		return nil, fmt.Errorf("scheduling: out-of-tree plugins: %w", err)
	}
	s := &Service{store: o.Store, cfg: o.Config, log: o.Logger, notify: o.Notifier, sample: o.Sampler, audit: o.Audit,
		extra: o.Plugins, gate: o.Gate, holder: o.Holder, now: o.Now, backoff: map[int64]time.Time{}, attempts: map[int64]int{},
		waiting: map[string][]*pending{}, preempted: map[int64][]int64{}}
	m, err := newMetrics(o.Registry, s)
	if err != nil {
		return nil, fmt.Errorf("scheduling metrics: %w", err)
	}
	s.m = m
	return s, nil
}

// Run campaigns for the lease and, while leader, runs the loop until ctx
// ends; the lease is given up on the way out so another server takes over
// at once.
func (s *Service) Run(ctx context.Context) {
	tick := time.NewTicker(s.cfg.Tick)
	defer tick.Stop()
	var synced time.Time
	ledGen := 0 // the keeper's generation this server leads under
	keeper := newLeaseKeeper(s.cfg.LeaseTTL, s.cfg.Tick, func(ctx context.Context, ttl time.Duration) (bool, error) {
		return s.store.AcquireLease(ctx, LeaseName, s.holder, ttl)
	})
	kctx, stopKeeper := context.WithCancel(ctx)
	kdone := make(chan struct{})
	go func() {
		defer close(kdone)
		keeper.run(kctx, func(err error) { s.log.Warn("scheduler lease", "err", err) })
	}()
	defer func() {
		stopKeeper()
		<-kdone
		s.stepDown()
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = s.store.ReleaseLease(rctx, LeaseName, s.holder)
	}()
	for {
		now := s.now()
		lead, gen, held := keeper.current()
		if s.isLeader() && (!held || gen != ledGen) {
			// Lost, or lost and taken again: what was built under the
			// previous leadership may be stale.
			s.stepDown()
		}
		switch {
		case held && !s.isLeader():
			if err := s.becomeLeader(lead); err != nil {
				if ctx.Err() == nil && lead.Err() == nil {
					s.log.Error("scheduler: cannot take over", "err", err)
					_ = s.store.ReleaseLease(ctx, LeaseName, s.holder)
				}
			} else {
				synced, ledGen = now, gen
			}
		}
		if held && s.isLeader() {
			if now.Sub(synced) >= s.cfg.NodeSync {
				synced = now
				s.nodeReads.start(lead, s)
			}
			// lead is cancelled when the lease is lost or runs out: the
			// tick's store calls stop there. A node read that finished
			// since the last tick is applied by this one.
			if err := s.tick(lead, s.nodeReads.take()); err != nil && ctx.Err() == nil && lead.Err() == nil {
				s.log.Warn("scheduling tick", "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-keeper.wake:
		}
	}
}

// Leader reports whether this server holds the scheduler lease (the alert
// engine runs on the same server).
func (s *Service) Leader() bool { return s.isLeader() }

func (s *Service) isLeader() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.leader
}

func (s *Service) stepDown() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.leader {
		s.log.Info("scheduler: no longer the leader", "holder", s.holder)
	}
	s.leader, s.snap, s.fw = false, nil, nil
	s.fleet.mu.Lock()
	s.fleet.fed = false // no sync feeds the never-fits view any more
	s.fleet.mu.Unlock()
	s.waiting = map[string][]*pending{}
	s.defrag = defragState{} // the next leadership reads the move window back
	s.m.leader.Set(0)
}

// becomeLeader loads the cluster from the store and builds the framework.
func (s *Service) becomeLeader(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.rebuildLocked(ctx); err != nil {
		return err
	}
	s.leader = true
	s.m.leader.Set(1)
	s.log.Info("scheduler: leader", "holder", s.holder, "nodes", len(s.snap.cl.Nodes), "placements", len(s.snap.placed))
	return nil
}

// rebuildLocked reads the whole cluster and ledger and builds a framework
// with the stored plugin settings (at take-over and on device changes).
func (s *Service) rebuildLocked(ctx context.Context) error {
	read := s.now()
	snap, err := buildSnapshot(ctx, s.store, s.cfg.BronzeOvercommit, read)
	if err != nil {
		return fmt.Errorf("scheduling snapshot: %w", err)
	}
	settings, err := s.store.ListPluginSettings(ctx)
	if err != nil {
		return err
	}
	fw, err := s.buildFramework(snap, settings)
	if err != nil {
		return err
	}
	snap.pools = s.pools
	s.snap, s.fw, s.settings = snap, fw, settings
	// The never-fits check starts from the nodes just read, not from a
	// read of its own when the first submissions arrive.
	nodes := make([]*controlplane.Node, 0, len(snap.byIdx))
	for _, e := range snap.byIdx {
		nodes = append(nodes, e.node)
	}
	s.fleetFromSyncLocked(nodes, read)
	s.waiting = map[string][]*pending{}
	if len(s.shapes.reqs) == 0 {
		if err := s.seedWorkloadLocked(ctx); err != nil {
			return err
		}
	}
	return s.observeWorkloadLocked(true)
}
