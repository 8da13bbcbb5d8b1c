package plugins

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/heteroflow/heteroflow/scheduler/framework"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

// NameGang is the all-or-nothing plugin.
const NameGang = "Gang"

// Gang holds the members of a task group at Permit until gang_size of them
// are reserved (assumed in the cluster): the caller binds nothing of a gang
// while Permit says Wait, and binds every member once it says Success. A
// gang that is not complete within the timeout is given up by the caller
// (Expired, then Drop), which releases what was assumed.
type Gang struct {
	timeout time.Duration
	now     func() time.Time
	mu      sync.Mutex
	groups  map[string]*gangGroup
}

type gangGroup struct {
	size    int
	members map[string]bool
	since   time.Time
}

type gangArgs struct {
	Timeout string `yaml:"timeout"`
}

var (
	_ framework.ReservePlugin = (*Gang)(nil)
	_ framework.PermitPlugin  = (*Gang)(nil)
)

// NewGang builds the plugin; timeout defaults to 60s.
func NewGang(args framework.Args, _ framework.Handle) (framework.Plugin, error) {
	a := gangArgs{Timeout: "60s"}
	if err := args.Decode(&a); err != nil {
		return nil, err
	}
	d, err := time.ParseDuration(a.Timeout)
	if err != nil || d <= 0 {
		return nil, fmt.Errorf("timeout must be a positive duration, not %q", a.Timeout)
	}
	return &Gang{timeout: d, now: time.Now, groups: map[string]*gangGroup{}}, nil
}

// Name implements framework.Plugin.
func (*Gang) Name() string { return NameGang }

// SetClock replaces the clock (tests).
func (g *Gang) SetClock(now func() time.Time) { g.now = now }

// Timeout is how long a gang may stay incomplete.
func (g *Gang) Timeout() time.Duration { return g.timeout }

// Reserve records a gang member's placement.
func (g *Gang) Reserve(_ context.Context, c *framework.Cycle, p *model.Placement) framework.Status {
	if c.Req.Gang == "" {
		return framework.OK
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	gr, ok := g.groups[c.Req.Gang]
	if !ok {
		gr = &gangGroup{size: c.Req.GangSize, members: map[string]bool{}, since: g.now()}
		g.groups[c.Req.Gang] = gr
	}
	gr.size = max(gr.size, c.Req.GangSize)
	gr.members[p.TaskID] = true
	return framework.OK
}

// Unreserve forgets a member whose placement was undone.
func (g *Gang) Unreserve(_ context.Context, c *framework.Cycle, p *model.Placement) {
	if c.Req.Gang == "" {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if gr, ok := g.groups[c.Req.Gang]; ok {
		delete(gr.members, p.TaskID)
		if len(gr.members) == 0 {
			delete(g.groups, c.Req.Gang)
		}
	}
}

// Permit waits until the whole gang is reserved.
func (g *Gang) Permit(_ context.Context, c *framework.Cycle, _ *model.Placement) (framework.Status, time.Duration) {
	if c.Req.Gang == "" {
		return framework.OK, 0
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	gr := g.groups[c.Req.Gang]
	if gr == nil || len(gr.members) >= gr.size {
		return framework.OK, 0
	}
	return framework.Status{Code: framework.Wait}, max(0, g.timeout-g.now().Sub(gr.since))
}

// Members lists a gang's reserved members, sorted.
func (g *Gang) Members(gang string) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	gr, ok := g.groups[gang]
	if !ok {
		return nil
	}
	out := make([]string, 0, len(gr.members))
	for id := range gr.members {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// Progress returns how many members are reserved out of the gang's size.
func (g *Gang) Progress(gang string) (reserved, size int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if gr, ok := g.groups[gang]; ok {
		return len(gr.members), gr.size
	}
	return 0, 0
}

// Expired lists incomplete gangs older than the timeout, sorted.
func (g *Gang) Expired() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	var out []string
	for name, gr := range g.groups {
		if len(gr.members) < gr.size && now.Sub(gr.since) >= g.timeout {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// Drop forgets a gang (bound, or given up after its timeout).
func (g *Gang) Drop(gang string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.groups, gang)
}
