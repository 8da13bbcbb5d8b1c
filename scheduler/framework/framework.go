package framework

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"github.com/heteroflow/heteroflow/scheduler/model"
)

// instance is one built plugin with its live settings.
type instance struct {
	plugin  Plugin
	weight  float64
	enabled bool
}

// compiled is an immutable view of the enabled plugins per extension point.
// It is swapped atomically on every runtime change (readers never lock).
type compiled struct {
	epoch      uint64
	preFilter  []PreFilterPlugin
	filter     []FilterPlugin
	assign     AssignPlugin
	preScore   []PreScorePlugin
	score      []ScorePlugin
	weights    []float64
	reserve    []ReservePlugin
	permit     []PermitPlugin
	bind       []BindPlugin
	postFilter []PostFilterPlugin
	audit      []AuditPlugin
	volatile   bool
	tieRandom  bool
}

// Framework runs scheduling cycles for one profile over one cluster.
// Schedule is serialised (one cycle at a time, like kube-scheduler's loop);
// SetWeight, SetEnabled, Invalidate and the getters are safe concurrently.
type Framework struct {
	profile Profile
	cluster *model.Cluster
	log     *slog.Logger

	mu        sync.Mutex // guards instances and rebuilds
	instances []*instance
	byName    map[string]*instance
	cfg       atomic.Pointer[compiled]
	epoch     atomic.Uint64

	cycleMu sync.Mutex // one cycle at a time
	cycle   Cycle
	memo    memo
	scratch Assignment
	rng     *rand.Rand
}

// Options for New.
type Options struct {
	Logger *slog.Logger
	Seed   uint64 // seeds random tie-breaks and the Random plugin
}

// New builds every plugin the profile lists from the registry.
func New(reg Registry, p Profile, cl *model.Cluster, opt Options) (*Framework, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	f := &Framework{profile: p, cluster: cl, log: opt.Logger, byName: map[string]*instance{},
		rng: rand.New(rand.NewPCG(opt.Seed, opt.Seed^0x9e3779b97f4a7c15))}
	f.epoch.Store(1)
	for _, pc := range p.Plugins {
		factory, ok := reg[pc.Name]
		if !ok {
			return nil, fmt.Errorf("profile %s: unknown plugin %q (registered: %v)", p.Name, pc.Name, reg.Names())
		}
		pl, err := factory(Args{node: &pc.Args}, f)
		if err != nil {
			return nil, fmt.Errorf("profile %s: plugin %s: %w", p.Name, pc.Name, err)
		}
		if pl.Name() != pc.Name {
			return nil, fmt.Errorf("profile %s: plugin %s calls itself %s", p.Name, pc.Name, pl.Name())
		}
		w := 1.0
		if pc.Weight != nil {
			w = *pc.Weight
		}
		in := &instance{plugin: pl, weight: w, enabled: pc.Enabled == nil || *pc.Enabled}
		f.instances = append(f.instances, in)
		f.byName[pc.Name] = in
	}
	if _, ok := f.byName[p.Assign].plugin.(AssignPlugin); !ok {
		return nil, fmt.Errorf("profile %s: %s is not an Assign plugin", p.Name, p.Assign)
	}
	if !f.byName[p.Assign].enabled {
		return nil, fmt.Errorf("profile %s: assign plugin %s cannot be disabled", p.Name, p.Assign)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rebuildLocked()
	return f, nil
}

func (f *Framework) rebuildLocked() {
	c := &compiled{epoch: f.epoch.Add(1), tieRandom: f.profile.TieBreak == TieRandom}
	for _, in := range f.instances {
		if !in.enabled {
			continue
		}
		pl := in.plugin
		if v, ok := pl.(Volatile); ok && v.Volatile() {
			c.volatile = true
		}
		if x, ok := pl.(PreFilterPlugin); ok {
			c.preFilter = append(c.preFilter, x)
		}
		if x, ok := pl.(FilterPlugin); ok {
			c.filter = append(c.filter, x)
		}
		if x, ok := pl.(AssignPlugin); ok && pl.Name() == f.profile.Assign {
			c.assign = x
		}
		if x, ok := pl.(PreScorePlugin); ok {
			c.preScore = append(c.preScore, x)
		}
		if x, ok := pl.(ScorePlugin); ok && in.weight > 0 {
			c.score = append(c.score, x)
			c.weights = append(c.weights, in.weight)
		}
		if x, ok := pl.(ReservePlugin); ok {
			c.reserve = append(c.reserve, x)
		}
		if x, ok := pl.(PermitPlugin); ok {
			c.permit = append(c.permit, x)
		}
		if x, ok := pl.(BindPlugin); ok {
			c.bind = append(c.bind, x)
		}
		if x, ok := pl.(PostFilterPlugin); ok {
			c.postFilter = append(c.postFilter, x)
		}
		if x, ok := pl.(AuditPlugin); ok {
			c.audit = append(c.audit, x)
		}
	}
	f.cfg.Store(c)
}

// SetWeight changes a plugin's score weight at run time.
func (f *Framework) SetWeight(name string, w float64) error {
	if w < 0 || w > 1e6 {
		return fmt.Errorf("weight must be between 0 and 1e6, got %v", w)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	in, ok := f.byName[name]
	if !ok {
		return fmt.Errorf("plugin %q is not in profile %s", name, f.profile.Name)
	}
	in.weight = w
	f.rebuildLocked()
	return nil
}

// SetEnabled turns a plugin on or off at run time (not the Assign plugin).
func (f *Framework) SetEnabled(name string, on bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	in, ok := f.byName[name]
	if !ok {
		return fmt.Errorf("plugin %q is not in profile %s", name, f.profile.Name)
	}
	if name == f.profile.Assign && !on {
		return fmt.Errorf("plugin %s picks devices and cannot be disabled", name)
	}
	in.enabled = on
	f.rebuildLocked()
	return nil
}

// PluginState is one plugin's live settings.
type PluginState struct {
	Name    string  `json:"name"`
	Weight  float64 `json:"weight"`
	Enabled bool    `json:"enabled"`
}

// Plugins lists the profile's plugins with their live settings.
func (f *Framework) Plugins() []PluginState {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]PluginState, len(f.instances))
	for i, in := range f.instances {
		out[i] = PluginState{Name: in.plugin.Name(), Weight: in.weight, Enabled: in.enabled}
	}
	return out
}

// Plugin returns a built plugin by name (e.g. to feed it data).
func (f *Framework) Plugin(name string) (Plugin, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	in, ok := f.byName[name]
	if !ok {
		return nil, false
	}
	return in.plugin, true
}

// Profile returns the profile the framework was built from.
func (f *Framework) Profile() Profile { return f.profile }

// Cluster implements Handle.
func (f *Framework) Cluster() *model.Cluster { return f.cluster }

// Logger implements Handle.
func (f *Framework) Logger() *slog.Logger { return f.log }

// Invalidate implements Handle: memoised results are dropped.
func (f *Framework) Invalidate() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rebuildLocked()
}
