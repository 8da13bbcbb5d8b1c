package plugins

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/heteroflow/heteroflow/scheduler/framework"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

// NamePreempt is the preemption plugin.
const NamePreempt = "Preempt"

// Preemption modes (brief §5: 禁用 / 仅排队 / 可抢占运行中).
const (
	PreemptOff            = "off"             // never displace anything
	PreemptQueueOnly      = "queue-only"      // displace placed tasks the agent has not started
	PreemptPreemptRunning = "preempt-running" // displace running tasks too
)

// VictimMeta is what Preempt needs to know about a placed task.
type VictimMeta struct {
	Priority int
	QoS      model.QoS
	Running  bool // started by its agent
	// Protected tasks are never chosen (draining already, gang members).
	Protected bool
}

// Proposal is the victims whose removal lets the request fit Node.
type Proposal struct {
	Preemptor string
	Node      string
	Victims   []string
}

// Preempt is a PostFilter: when no node fits, it looks for the node where
// the smallest set of lower-priority placements, once removed, makes room,
// and proposes it (Take). It changes nothing: the caller requeues the
// victims and retries the preemptor once their capacity is released.
//
// Rules: only strictly lower priority is displaced; Gold is displaced only
// by Gold; queue-only never touches running tasks. Per node the victims are
// taken lowest priority first until the request fits, then each is given
// back if the request still fits without taking it (kube's reprieve); the
// node with the fewest victims wins, then the lowest highest-victim priority.
type Preempt struct {
	mode string
	mu   sync.Mutex
	info func(taskID string) (VictimMeta, bool)
	last *Proposal
}

type preemptArgs struct {
	Mode string `yaml:"mode"`
}

var _ framework.PostFilterPlugin = (*Preempt)(nil)

// NewPreempt builds the plugin; mode defaults to preempt-running.
func NewPreempt(args framework.Args, _ framework.Handle) (framework.Plugin, error) {
	a := preemptArgs{Mode: PreemptPreemptRunning}
	if err := args.Decode(&a); err != nil {
		return nil, err
	}
	if err := checkPreemptMode(a.Mode); err != nil {
		return nil, err
	}
	return &Preempt{mode: a.Mode}, nil
}

func checkPreemptMode(m string) error {
	if m != PreemptOff && m != PreemptQueueOnly && m != PreemptPreemptRunning {
		return fmt.Errorf("mode must be %s, %s or %s, not %q", PreemptOff, PreemptQueueOnly, PreemptPreemptRunning, m)
	}
	return nil
}

// Name implements framework.Plugin.
func (*Preempt) Name() string { return NamePreempt }

// SetVictimInfo connects the lookup of placed tasks' priority and tier.
func (p *Preempt) SetVictimInfo(fn func(taskID string) (VictimMeta, bool)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.info = fn
}

// Mode returns the current mode.
func (p *Preempt) Mode() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mode
}

// SetMode changes the mode at run time.
func (p *Preempt) SetMode(m string) error {
	if err := checkPreemptMode(m); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mode = m
	return nil
}

// Take returns and clears the last proposal.
func (p *Preempt) Take() *Proposal {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.last
	p.last = nil
	return out
}

// PostFilter proposes victims on the best node (see the type comment).
func (p *Preempt) PostFilter(_ context.Context, c *framework.Cycle, d *framework.Diagnosis) (string, framework.Status) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last = nil
	if p.mode == PreemptOff || p.info == nil || d == nil || c.Req.DeviceCount == 0 {
		return "", framework.Status{Code: framework.Skip}
	}
	byNode := map[string][]model.Placement{}
	for _, pl := range c.Cluster.Placements() {
		byNode[pl.Node] = append(byNode[pl.Node], pl)
	}
	var best *Proposal
	bestMax := 0
	for _, ns := range d.Nodes {
		if ns.Code != framework.Unschedulable {
			continue // unresolvable: removing tasks cannot help
		}
		ni, err := c.Cluster.Node(ns.Node)
		if err != nil {
			continue
		}
		victims, maxPrio, err := p.victimsOn(c, ni, byNode[ns.Node])
		if err != nil {
			return "", framework.AsError(err)
		}
		if len(victims) == 0 {
			continue
		}
		if best == nil || len(victims) < len(best.Victims) || (len(victims) == len(best.Victims) && maxPrio < bestMax) {
			best = &Proposal{Preemptor: c.Req.ID, Node: ns.Node, Victims: victims}
			bestMax = maxPrio
		}
	}
	if best == nil {
		return "", framework.Reject(reasonNoVictims)
	}
	p.last = best
	return best.Node, framework.OK
}

var reasonNoVictims = framework.NewReason("no lower-priority placements whose removal makes room")

type victim struct {
	p    model.Placement
	meta VictimMeta
}

// victimsOn finds the minimal victim set on one node, leaving the cluster
// as it found it.
func (p *Preempt) victimsOn(c *framework.Cycle, ni *model.NodeInfo, placed []model.Placement) ([]string, int, error) {
	r := c.Req
	var cands []victim
	for _, pl := range placed {
		m, ok := p.info(pl.TaskID)
		if !ok || m.Protected || m.Priority >= r.Priority {
			continue
		}
		if m.QoS == model.QoSGold && r.QoS != model.QoSGold {
			continue // Gold is never preempted by lower tiers
		}
		if m.Running && p.mode != PreemptPreemptRunning {
			continue
		}
		cands = append(cands, victim{pl, m})
	}
	if len(cands) == 0 {
		return nil, 0, nil
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].meta.Priority != cands[j].meta.Priority {
			return cands[i].meta.Priority < cands[j].meta.Priority
		}
		return cands[i].p.TaskID > cands[j].p.TaskID // newer first: least work lost
	})
	removed := 0
	restore := func() error {
		for k := removed - 1; k >= 0; k-- {
			if err := c.Cluster.Assign(cands[k].p); err != nil {
				return fmt.Errorf("preempt: restore %s: %w", cands[k].p.TaskID, err)
			}
		}
		return nil
	}
	fits := false
	for removed < len(cands) && !fits {
		if err := c.Cluster.Release(cands[removed].p.TaskID); err != nil {
			return nil, 0, err
		}
		removed++
		fits = requestFits(c, ni)
	}
	if !fits {
		return nil, 0, restore()
	}
	// Reprieve: give back the most important victims that are not needed.
	keep := make([]bool, removed)
	for k := removed - 1; k >= 0; k-- {
		if err := c.Cluster.Assign(cands[k].p); err != nil {
			continue // cannot go back next to what was reprieved: stays a victim
		}
		if requestFits(c, ni) {
			keep[k] = true
			continue
		}
		if err := c.Cluster.Release(cands[k].p.TaskID); err != nil {
			return nil, 0, err
		}
	}
	var out []string
	maxPrio := 0
	for k := 0; k < removed; k++ {
		if keep[k] {
			continue
		}
		out = append(out, cands[k].p.TaskID)
		maxPrio = max(maxPrio, cands[k].meta.Priority)
		if err := c.Cluster.Assign(cands[k].p); err != nil {
			return nil, 0, fmt.Errorf("preempt: restore %s: %w", cands[k].p.TaskID, err)
		}
	}
	return out, maxPrio, nil
}

// requestFits is the host and device feasibility of c.Req on one node
// (ResourceFit's rules), used on the what-if states of preemption.
func requestFits(c *framework.Cycle, n *model.NodeInfo) bool {
	r := c.Req
	if n.FreeCPU < r.CPUMilli || n.FreeMem < r.HostMemoryMiB {
		return false
	}
	var buf [model.MaxDevicesPerNode]cand
	return len(fittingDevices(c, n, buf[:0])) >= r.DeviceCount
}
