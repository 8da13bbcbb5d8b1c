package retention

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/heteroflow/heteroflow/controlplane"
)

// LeaseName is the lease of the server that prunes.
const LeaseName = "retention"

// DefaultSubmitKeyMaxAge keeps idempotency keys a day: far longer than a
// client retries one submission, short enough that keys do not pile up.
const DefaultSubmitKeyMaxAge = 24 * time.Hour

// Store is what pruning needs from persistence.
type Store interface {
	controlplane.RetentionStore
	AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (bool, error)
	ReleaseLease(ctx context.Context, name, holder string) error
}

// Config bounds each kind; a zero bound is no bound (the server's
// configuration holds the defaults).
type Config struct {
	Interval time.Duration // between passes (default 1h)
	Holder   string        // names this server in the lease (default host/pid)

	AuditMaxAge      time.Duration
	AuditMaxRows     int64
	TaskLogMaxAge    time.Duration
	TaskLogMaxBytes  int64
	TaskEventMaxAge  time.Duration
	TaskEventMaxRows int64
	// SubmitKeyMaxAge is how long a task or workflow keeps the idempotency
	// key it was submitted with, so that a client's retries find it (default 24 h).
	SubmitKeyMaxAge time.Duration
}

// Options are the pruner's dependencies.
type Options struct {
	Store    Store
	Config   Config
	Logger   *slog.Logger
	Registry prometheus.Registerer // nil: no metrics exported
	Now      func() time.Time
}

// Batch sizes: rows per call for the audit log and task events, tasks per
// call for task logs, so that one call holds SQLite's write lock only for a
// few milliseconds and agents' writes interleave.
const (
	rowBatch  = 1000
	taskBatch = 100
)

// Pruner runs retention passes.
type Pruner struct {
	store Store
	cfg   Config
	log   *slog.Logger
	now   func() time.Time
	rows  *prometheus.CounterVec
	bytes *prometheus.CounterVec
}

// New builds a Pruner.
func New(o Options) (*Pruner, error) {
	if o.Store == nil {
		return nil, errors.New("retention: Store is required")
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Config.Interval <= 0 {
		o.Config.Interval = time.Hour
	}
	if o.Config.SubmitKeyMaxAge <= 0 {
		o.Config.SubmitKeyMaxAge = DefaultSubmitKeyMaxAge
	}
	if o.Config.Holder == "" {
		host, _ := os.Hostname()
		o.Config.Holder = host + "/" + strconv.Itoa(os.Getpid())
	}
	p := &Pruner{store: o.Store, cfg: o.Config, log: o.Logger, now: o.Now,
		rows: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "heteroflow_retention_pruned_rows_total",
			Help: "Rows removed by retention, per kind (audit, task_logs: log chunks, task_events)."}, []string{"kind"}),
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "heteroflow_retention_pruned_bytes_total",
			Help: "Bytes of text and log data removed by retention, per kind."}, []string{"kind"}),
	}
	for _, k := range []string{controlplane.RetainAudit, controlplane.RetainTaskLogs, controlplane.RetainTaskEvents, controlplane.RetainSubmitKeys} {
		p.rows.WithLabelValues(k) // present at 0 before the first pass
		p.bytes.WithLabelValues(k)
	}
	if o.Registry != nil {
		for _, c := range []prometheus.Collector{p.rows, p.bytes} {
			if err := o.Registry.Register(c); err != nil {
				return nil, fmt.Errorf("retention metrics: %w", err)
			}
		}
	}
	return p, nil
}

// Report is what one pass removed, per kind.
type Report map[string]controlplane.Pruned

// PruneOnce runs one pass over every kind, each until a call removes
// nothing, and counts what went in the metrics. It stops at the first
// error (the next pass retries), reporting what was removed before it.
func (p *Pruner) PruneOnce(ctx context.Context) (Report, error) {
	now := p.now()
	before := func(age time.Duration) time.Time {
		if age <= 0 {
			return time.Time{}
		}
		return now.Add(-age)
	}
	kinds := []struct {
		kind  string
		rule  controlplane.PruneRule
		prune func(context.Context, controlplane.PruneRule) (controlplane.Pruned, error)
	}{
		{controlplane.RetainAudit, controlplane.PruneRule{Before: before(p.cfg.AuditMaxAge), MaxRows: p.cfg.AuditMaxRows, Limit: rowBatch}, p.store.PruneAudit},
		{controlplane.RetainTaskLogs, controlplane.PruneRule{Before: before(p.cfg.TaskLogMaxAge), MaxBytes: p.cfg.TaskLogMaxBytes, Limit: taskBatch}, p.store.PruneTaskLogs},
		{controlplane.RetainTaskEvents, controlplane.PruneRule{Before: before(p.cfg.TaskEventMaxAge), MaxRows: p.cfg.TaskEventMaxRows, Limit: rowBatch}, p.store.PruneTaskEvents},
		{controlplane.RetainSubmitKeys, controlplane.PruneRule{Before: before(p.cfg.SubmitKeyMaxAge), Limit: rowBatch}, p.store.PruneSubmitKeys},
	}
	rep := Report{}
	for _, k := range kinds {
		if k.rule.Before.IsZero() && k.rule.MaxRows <= 0 && k.rule.MaxBytes <= 0 {
			continue // kept forever
		}
		var sum controlplane.Pruned
		for {
			got, err := k.prune(ctx, k.rule)
			sum.Rows, sum.Bytes = sum.Rows+got.Rows, sum.Bytes+got.Bytes
			p.rows.WithLabelValues(k.kind).Add(float64(got.Rows))
			p.bytes.WithLabelValues(k.kind).Add(float64(got.Bytes))
			if err != nil {
				rep[k.kind] = sum
				return rep, fmt.Errorf("retention %s: %w", k.kind, err)
			}
			if got.Rows == 0 || ctx.Err() != nil {
				break
			}
		}
		rep[k.kind] = sum
		if sum.Rows > 0 {
			p.log.Info("retention pruned", "kind", k.kind, "rows", sum.Rows, "bytes", sum.Bytes)
		}
	}
	return rep, ctx.Err()
}

// Run prunes every interval while this server holds the retention lease,
// until ctx ends (then the lease is given up).
func (p *Pruner) Run(ctx context.Context) {
	t := time.NewTicker(p.cfg.Interval)
	defer t.Stop()
	defer func() {
		rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = p.store.ReleaseLease(rctx, LeaseName, p.cfg.Holder)
	}()
	for {
		// The lease outlives a pass that takes longer than the interval.
		ok, err := p.store.AcquireLease(ctx, LeaseName, p.cfg.Holder, 3*p.cfg.Interval)
		switch {
		case err != nil && ctx.Err() == nil:
			p.log.Warn("retention: lease", "err", err)
		case ok:
			if _, err := p.PruneOnce(ctx); err != nil && ctx.Err() == nil {
				p.log.Error("retention pass failed", "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
