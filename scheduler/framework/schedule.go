package framework

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/heteroflow/heteroflow/scheduler/model"
)

// ErrUnschedulable is returned (wrapped) when no node fits.
var ErrUnschedulable = errors.New("unschedulable")

// ScheduleOptions tune one cycle.
type ScheduleOptions struct {
	// Diagnose fills Result.Diagnosis on failure ("why pending"). The
	// simulator turns it off: it only counts failures.
	Diagnose bool
}

// Result of one cycle.
type Result struct {
	Placement *model.Placement
	// Waiting is set when a Permit plugin holds the placement (gang).
	Waiting   bool
	Timeout   time.Duration
	Diagnosis *Diagnosis
	Nominated string // PostFilter's nominated node, if any
}

var reasonAssign = NewReason("no device slice fits")

// Schedule runs one cycle for req: PreFilter, then one fused pass over the
// nodes (Filter → Assign → Score, memoised), selection, Reserve (the
// placement is assumed in the cluster), Permit, Bind, Audit. On failure it
// runs PostFilter and returns ErrUnschedulable with a Diagnosis.
func (f *Framework) Schedule(ctx context.Context, req *model.Request, opt ScheduleOptions) (Result, error) {
	if req.ShapeKey() == "" {
		if err := req.Normalize(); err != nil {
			return Result{}, err
		}
	}
	f.cycleMu.Lock()
	defer f.cycleMu.Unlock()
	cfg := f.cfg.Load()
	c := &f.cycle
	c.reset(req, f.cluster)
	c.Rand = f.rng
	for _, p := range cfg.preFilter {
		if st := p.PreFilter(ctx, c); !st.IsSuccess() {
			return f.fail(ctx, cfg, c, opt, p.Name(), st)
		}
	}
	for _, p := range cfg.preScore {
		if st := p.PreScore(ctx, c); !st.IsSuccess() {
			return Result{}, fmt.Errorf("prescore %s: %s", p.Name(), st)
		}
	}
	nodes := f.cluster.Nodes
	var tab *memoTable
	if !cfg.volatile {
		tab = f.memo.table(req.ShapeKey(), cfg.epoch, f.cluster.Epoch, len(nodes))
	}
	best, ties := -1, 0
	bestScore := 0.0
	for i, ni := range nodes {
		var e memoEntry
		if tab != nil && tab.entries[i].version == ni.Version {
			e = tab.entries[i]
		} else {
			e = f.evalNode(ctx, cfg, c, ni)
			if e.status.Code == Error {
				return Result{}, fmt.Errorf("node %s: %w", ni.Node.Name, e.status.Err)
			}
			if tab != nil {
				tab.entries[i] = e
			}
		}
		if !e.status.IsSuccess() {
			continue
		}
		switch {
		case best < 0 || e.score > bestScore:
			best, bestScore, ties = i, e.score, 1
		case e.score == bestScore && cfg.tieRandom:
			// Reservoir sampling: each tied node wins with equal probability.
			ties++
			if c.Rand.IntN(ties) == 0 {
				best = i
			}
		}
	}
	if best < 0 {
		return f.fail(ctx, cfg, c, opt, "", OK)
	}
	return f.commit(ctx, cfg, c, nodes[best])
}

// evalNode runs Filter, Assign and Score on one node.
func (f *Framework) evalNode(ctx context.Context, cfg *compiled, c *Cycle, ni *model.NodeInfo) memoEntry {
	e := memoEntry{version: ni.Version}
	for j, p := range cfg.filter {
		if st := p.Filter(ctx, c, ni); !st.IsSuccess() {
			e.status, e.plugin = st, int16(j)
			return e
		}
	}
	a := &f.scratch
	a.Reset()
	if st := cfg.assign.Assign(ctx, c, ni, a); !st.IsSuccess() {
		if st.Reason == 0 && st.Code != Error {
			st.Reason = reasonAssign
		}
		e.status, e.plugin = st, -1
		return e
	}
	for j, p := range cfg.score {
		s, st := p.Score(ctx, c, ni, a)
		if st.Code == Error {
			e.status = st
			return e
		}
		e.score += cfg.weights[j] * s
	}
	return e
}

// commit re-runs Assign on the winner, assumes the placement in the
// cluster, and runs Reserve, Permit, Bind and Audit.
func (f *Framework) commit(ctx context.Context, cfg *compiled, c *Cycle, ni *model.NodeInfo) (Result, error) {
	a := &f.scratch
	a.Reset()
	if st := cfg.assign.Assign(ctx, c, ni, a); !st.IsSuccess() {
		return Result{}, fmt.Errorf("assign on chosen node %s: %s", ni.Node.Name, st)
	}
	req := c.Req
	p := &model.Placement{TaskID: req.ID, Node: ni.Node.Name, CPUMilli: req.CPUMilli, MemMiB: req.HostMemoryMiB,
		Slices: append([]model.Slice(nil), a.Slices...)}
	var cands []CandidateScore
	if len(cfg.audit) > 0 {
		cands = []CandidateScore{f.breakdown(ctx, cfg, c, ni, a)}
	}
	if err := f.cluster.Assign(*p); err != nil {
		return Result{}, fmt.Errorf("assume: %w", err)
	}
	undo := func(upto int) {
		for k := upto - 1; k >= 0; k-- {
			cfg.reserve[k].Unreserve(ctx, c, p)
		}
		if err := f.cluster.Release(p.TaskID); err != nil {
			f.log.Error("release after failed reserve", "task", p.TaskID, "err", err)
		}
	}
	for k, r := range cfg.reserve {
		if st := r.Reserve(ctx, c, p); !st.IsSuccess() {
			undo(k)
			return Result{}, fmt.Errorf("reserve %s: %s", r.Name(), st)
		}
	}
	res := Result{Placement: p}
	for _, pm := range cfg.permit {
		st, timeout := pm.Permit(ctx, c, p)
		switch {
		case st.Code == Wait:
			res.Waiting, res.Timeout = true, max(res.Timeout, timeout)
		case !st.IsSuccess():
			undo(len(cfg.reserve))
			return Result{}, fmt.Errorf("permit %s: %s", pm.Name(), st)
		}
	}
	if !res.Waiting {
		for _, b := range cfg.bind {
			if st := b.Bind(ctx, c, p); !st.IsSuccess() {
				undo(len(cfg.reserve))
				return Result{}, fmt.Errorf("bind %s: %s", b.Name(), st)
			}
		}
	}
	status := "scheduled"
	if res.Waiting {
		status = "waiting" // reserved, held by a Permit plugin (a gang not yet complete)
	}
	f.audit(ctx, cfg, &Decision{Request: req, Placement: p, Status: status, Candidates: cands})
	return res, nil
}

// breakdown recomputes one node's per-plugin scores (audit only).
func (f *Framework) breakdown(ctx context.Context, cfg *compiled, c *Cycle, ni *model.NodeInfo, a *Assignment) CandidateScore {
	cs := CandidateScore{Node: ni.Node.Name, Scores: make(map[string]float64, len(cfg.score))}
	for j, p := range cfg.score {
		s, _ := p.Score(ctx, c, ni, a)
		cs.Scores[p.Name()] = s
		cs.Total += cfg.weights[j] * s
	}
	return cs
}

func (f *Framework) audit(ctx context.Context, cfg *compiled, d *Decision) {
	for _, a := range cfg.audit {
		a.Audit(ctx, d)
	}
}

// fail builds the diagnosis (if asked or audited), runs PostFilter and
// returns ErrUnschedulable.
func (f *Framework) fail(ctx context.Context, cfg *compiled, c *Cycle, opt ScheduleOptions, preFilter string, pst Status) (Result, error) {
	var res Result
	var d *Diagnosis
	if opt.Diagnose || len(cfg.postFilter) > 0 || len(cfg.audit) > 0 {
		// Audit alone gets the per-reason counts; the per-node list is
		// built only when a caller asks why (Diagnose) or may preempt.
		d = f.diagnose(ctx, cfg, c, preFilter, pst, opt.Diagnose || len(cfg.postFilter) > 0)
		res.Diagnosis = d
	}
	for _, pf := range cfg.postFilter {
		if node, st := pf.PostFilter(ctx, c, d); st.IsSuccess() && node != "" {
			res.Nominated = node
			break
		}
	}
	f.audit(ctx, cfg, &Decision{Request: c.Req, Status: "unschedulable", Diagnosis: d})
	if d != nil {
		return res, fmt.Errorf("%w: %s", ErrUnschedulable, d.Summary())
	}
	return res, ErrUnschedulable
}

func (f *Framework) diagnose(ctx context.Context, cfg *compiled, c *Cycle, preFilter string, pst Status, perNode bool) *Diagnosis {
	nodes := f.cluster.Nodes
	d := &Diagnosis{Total: len(nodes), ByReason: map[string]int{}}
	if preFilter != "" {
		d.ByReason[pst.Reason.String()] = len(nodes)
		for _, ni := range nodes {
			if !perNode {
				break
			}
			d.Nodes = append(d.Nodes, NodeStatus{Node: ni.Node.Name, Plugin: preFilter, Code: pst.Code, Reason: pst.Reason.String()})
		}
		return d
	}
	var tab *memoTable
	if !cfg.volatile {
		tab = f.memo.table(c.Req.ShapeKey(), cfg.epoch, f.cluster.Epoch, len(nodes))
	}
	// Count per reason id first: one map write per distinct reason, not per node.
	var counts [64]int
	for i, ni := range nodes {
		var e memoEntry
		if tab != nil && tab.entries[i].version == ni.Version {
			e = tab.entries[i]
		} else {
			e = f.evalNode(ctx, cfg, c, ni)
		}
		if e.status.IsSuccess() {
			continue
		}
		if int(e.status.Reason) < len(counts) {
			counts[e.status.Reason]++
		} else {
			d.ByReason[e.status.Reason.String()]++
		}
		if !perNode {
			continue
		}
		ns := NodeStatus{Node: ni.Node.Name, Code: e.status.Code, Reason: e.status.Reason.String(), Plugin: cfg.assign.Name()}
		if e.plugin >= 0 {
			ns.Plugin = cfg.filter[e.plugin].Name()
		}
		d.Nodes = append(d.Nodes, ns)
	}
	for r, n := range counts {
		if n > 0 {
			d.ByReason[Reason(r).String()] += n
		}
	}
	return d
}
