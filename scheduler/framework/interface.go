package framework

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/heteroflow/heteroflow/scheduler/model"
)

// Plugin is the root interface; Name must be unique in a registry.
type Plugin interface{ Name() string }

// PreFilterPlugin checks the request once per cycle (and may refuse it
// outright: "no node has that model").
type PreFilterPlugin interface {
	Plugin
	PreFilter(ctx context.Context, c *Cycle) Status
}

// FilterPlugin is a per-node predicate on host-level facts (CPU, labels,
// RDMA, models present). Device-level feasibility belongs to Assign.
type FilterPlugin interface {
	Plugin
	Filter(ctx context.Context, c *Cycle, n *model.NodeInfo) Status
}

// AssignPlugin picks the device slices the request gets on a node; a node
// where it finds none is infeasible. Exactly one is active per profile.
type AssignPlugin interface {
	Plugin
	Assign(ctx context.Context, c *Cycle, n *model.NodeInfo, out *Assignment) Status
}

// PreScorePlugin precomputes per cycle, before any node is scored.
type PreScorePlugin interface {
	Plugin
	PreScore(ctx context.Context, c *Cycle) Status
}

// ScorePlugin rates a feasible node and the Assign plugin's choice on it,
// in [0, 100]; the framework multiplies by the plugin's weight.
type ScorePlugin interface {
	Plugin
	Score(ctx context.Context, c *Cycle, n *model.NodeInfo, a *Assignment) (float64, Status)
}

// ReservePlugin reacts to the placement being assumed in the cluster;
// Unreserve undoes it when a later stage fails.
type ReservePlugin interface {
	Plugin
	Reserve(ctx context.Context, c *Cycle, p *model.Placement) Status
	Unreserve(ctx context.Context, c *Cycle, p *model.Placement)
}

// PermitPlugin may approve, reject or hold (Wait, with a timeout) a
// reserved placement: the gang plugin holds members until all fit.
type PermitPlugin interface {
	Plugin
	Permit(ctx context.Context, c *Cycle, p *model.Placement) (Status, time.Duration)
}

// BindPlugin makes a permitted placement durable (the store, the agent).
type BindPlugin interface {
	Plugin
	Bind(ctx context.Context, c *Cycle, p *model.Placement) Status
}

// PostFilterPlugin runs when no node is feasible (preemption). It may
// return a node where room was made; the caller retries the task later.
type PostFilterPlugin interface {
	Plugin
	PostFilter(ctx context.Context, c *Cycle, d *Diagnosis) (nominated string, s Status)
}

// AuditPlugin receives every decision with its scores.
type AuditPlugin interface {
	Plugin
	Audit(ctx context.Context, d *Decision)
}

// Volatile is implemented by plugins whose answers depend on more than the
// node's state and the request (randomness); it disables the memo.
type Volatile interface{ Volatile() bool }

// Handle is what plugin factories get from the framework.
type Handle interface {
	Cluster() *model.Cluster
	Logger() *slog.Logger
	// Invalidate drops memoised feasibility and scores, for plugins whose
	// inputs changed (a new PromQL sample, a new target workload).
	Invalidate()
}

// Assignment is the Assign plugin's choice on one node; buffers are reused.
type Assignment struct {
	Slices []model.Slice
	// Cost is the Assign plugin's own measure of its choice (Fragmentation:
	// the growth of expected fragmentation), valid when CostBy names it, so
	// the same plugin's Score does not recompute it.
	Cost   float64
	CostBy string
}

// Reset empties the assignment keeping capacity.
func (a *Assignment) Reset() { a.Slices, a.Cost, a.CostBy = a.Slices[:0], 0, "" }

// Cycle is the per-request state of one scheduling cycle (kube's
// CycleState). Hot per-cycle facts are typed fields; plugins keep their own
// precomputations under their name with Write/Read.
type Cycle struct {
	Req     *model.Request
	Cluster *model.Cluster
	// ModelAllowed[id] says whether the request's vendor/model filters admit
	// the cluster's model id (computed once per cycle by the framework).
	ModelAllowed []bool
	Rand         *rand.Rand
	data         map[string]any
}

// Write stores plugin data for this cycle.
func (c *Cycle) Write(key string, v any) {
	if c.data == nil {
		c.data = map[string]any{}
	}
	c.data[key] = v
}

// Read returns plugin data stored in this cycle.
func (c *Cycle) Read(key string) (any, bool) {
	v, ok := c.data[key]
	return v, ok
}

func (c *Cycle) reset(req *model.Request, cl *model.Cluster) {
	c.Req, c.Cluster = req, cl
	models := cl.Models()
	if cap(c.ModelAllowed) < len(models) {
		c.ModelAllowed = make([]bool, len(models))
	}
	c.ModelAllowed = c.ModelAllowed[:len(models)]
	for i, m := range models {
		c.ModelAllowed[i] = req.ModelAllowed(m.Vendor, m.Model)
	}
	clear(c.data)
}
