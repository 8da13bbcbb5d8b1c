package plugins

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	pmodel "github.com/prometheus/common/model"

	"github.com/heteroflow/heteroflow/scheduler/framework"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

// NameLoadAware is the live-utilisation plugin.
const NameLoadAware = "LoadAware"

// HostLabel is the node label the server sets to the node id, the
// value of host_name on the node's metrics (nodes are named by id).
const HostLabel = "heteroflow.io/hostname"

var reasonSaturated = framework.NewReason("devices saturated in reality (live utilisation)")

// Sampler is the PromQL instant-query interface LoadAware reads
// (controlplane/metricstore/query.Querier satisfies it).
type Sampler interface {
	Instant(ctx context.Context, expr string, ts time.Time) (pmodel.Vector, error)
}

// LoadAware places by measured, not allocated, load. Once per interval (in
// PreScore, never per node or task) it runs two configurable PromQL
// expressions over the whole cluster — device utilisation and memory
// pressure, both ratios in [0, 1] by host_name and hw_index — and keeps the
// answer per node and device. It is:
//   - Filter: a node with fewer than device_count unsaturated devices is
//     refused for guarded tiers (Bronze by default);
//   - Assign: ResourceFit's choice (binpack/spread) restricted to
//     unsaturated devices for guarded tiers, so a Bronze share never lands
//     on a card saturated in reality;
//   - Score: 100 × (1 − mean utilisation of the chosen devices); unknown
//     utilisation (no sample: absent, never 0) scores a neutral 50.
type LoadAware struct {
	h    framework.Handle
	args loadAwareArgs
	now  func() time.Time

	mu        sync.Mutex
	src       Sampler
	fetchedAt time.Time
	lastErr   error
	queries   int
	samples   map[devKey]load // by (host, index)
	epoch     uint64          // cluster epoch byNode was built for
	fetchGen  uint64          // bumped on every refresh
	builtGen  uint64
	byNode    [][]load // node index → device position → load
	cands     []cand
	interval  time.Duration
}

type devKey struct {
	host  string
	index int
}

// load is one device's measured state; util/mem < 0 = unknown.
type load struct{ util, mem float64 }

type loadAwareArgs struct {
	Interval         string   `yaml:"interval"`
	UtilizationQuery string   `yaml:"utilizationQuery"`
	MemoryQuery      string   `yaml:"memoryQuery"`
	HostLabel        string   `yaml:"hostLabel"`
	IndexLabel       string   `yaml:"indexLabel"`
	SaturatedUtil    float64  `yaml:"saturatedUtilization"`
	SaturatedMemory  float64  `yaml:"saturatedMemory"`
	GuardTiers       []string `yaml:"guardTiers"`
	Strategy         string   `yaml:"strategy"`
}

// Default PromQL: averaged utilisation over a minute (a momentary spike is
// not saturation) and current memory use over capacity.
const (
	DefaultUtilizationQuery = `avg by (host_name, hw_index) (avg_over_time(hw_gpu_utilization_ratio[1m]))`
	DefaultMemoryQuery      = `sum by (host_name, hw_index) (hw_gpu_memory_usage_bytes) / sum by (host_name, hw_index) (hw_gpu_memory_limit_bytes)`
)

var (
	_ framework.FilterPlugin   = (*LoadAware)(nil)
	_ framework.AssignPlugin   = (*LoadAware)(nil)
	_ framework.PreScorePlugin = (*LoadAware)(nil)
	_ framework.ScorePlugin    = (*LoadAware)(nil)
)

// NewLoadAware builds the plugin; it has no data until SetSampler.
func NewLoadAware(args framework.Args, h framework.Handle) (framework.Plugin, error) {
	a := loadAwareArgs{Interval: "15s", UtilizationQuery: DefaultUtilizationQuery, MemoryQuery: DefaultMemoryQuery,
		HostLabel: "host_name", IndexLabel: "hw_index", SaturatedUtil: 0.9, SaturatedMemory: 0.95,
		GuardTiers: []string{string(model.QoSBronze)}, Strategy: "binpack"}
	if err := args.Decode(&a); err != nil {
		return nil, err
	}
	iv, err := time.ParseDuration(a.Interval)
	switch {
	case err != nil || iv < time.Second:
		return nil, fmt.Errorf("interval must be a duration of at least 1s, not %q", a.Interval)
	case a.UtilizationQuery == "":
		return nil, fmt.Errorf("utilizationQuery is required")
	case a.SaturatedUtil <= 0 || a.SaturatedUtil > 1 || a.SaturatedMemory <= 0 || a.SaturatedMemory > 1:
		return nil, fmt.Errorf("saturatedUtilization and saturatedMemory must be in (0, 1]")
	case a.Strategy != "binpack" && a.Strategy != "spread":
		return nil, fmt.Errorf("strategy must be binpack or spread, not %q", a.Strategy)
	}
	for _, t := range a.GuardTiers {
		if q := model.QoS(t); q != model.QoSGold && q != model.QoSSilver && q != model.QoSBronze {
			return nil, fmt.Errorf("guardTiers: unknown tier %q", t)
		}
	}
	return &LoadAware{h: h, args: a, now: time.Now, interval: iv}, nil
}

// Name implements framework.Plugin.
func (*LoadAware) Name() string { return NameLoadAware }

// SetSampler connects the PromQL source (nil: no live data, nothing is
// refused and every node scores neutral).
func (p *LoadAware) SetSampler(s Sampler) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.src, p.fetchedAt = s, time.Time{}
}

// SetClock replaces the clock (tests).
func (p *LoadAware) SetClock(now func() time.Time) { p.now = now }

// Stats reports the number of PromQL queries run, the last refresh and its error.
func (p *LoadAware) Stats() (queries int, at time.Time, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.queries, p.fetchedAt, p.lastErr
}

// PreScore refreshes the cache when the interval has passed.
func (p *LoadAware) PreScore(ctx context.Context, c *framework.Cycle) framework.Status {
	p.refresh(ctx)
	p.index(c.Cluster)
	return framework.OK
}

func (p *LoadAware) refresh(ctx context.Context) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if p.src == nil || (!p.fetchedAt.IsZero() && now.Sub(p.fetchedAt) < p.interval) {
		return
	}
	p.fetchedAt = now
	qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	samples := map[devKey]load{}
	err := p.query(qctx, p.args.UtilizationQuery, now, samples, func(l *load, v float64) { l.util = v })
	if err == nil && p.args.MemoryQuery != "" {
		err = p.query(qctx, p.args.MemoryQuery, now, samples, func(l *load, v float64) { l.mem = v })
	}
	p.lastErr = err
	if err != nil {
		// Keep the previous answer: a PromQL outage must not turn every
		// device "unknown" at once, nor stop scheduling.
		p.h.Logger().Warn("loadaware: utilisation query failed, keeping the last sample", "err", err)
		return
	}
	p.samples = samples
	p.fetchGen++
	p.h.Invalidate() // scores depend on the new sample
}

func (p *LoadAware) query(ctx context.Context, expr string, ts time.Time, into map[devKey]load, set func(*load, float64)) error {
	p.queries++
	vec, err := p.src.Instant(ctx, expr, ts)
	if err != nil {
		return fmt.Errorf("loadaware query %q: %w", expr, err)
	}
	for _, s := range vec {
		idx, err := strconv.Atoi(string(s.Metric[pmodel.LabelName(p.args.IndexLabel)]))
		host := string(s.Metric[pmodel.LabelName(p.args.HostLabel)])
		v := float64(s.Value)
		if err != nil || host == "" || math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		k := devKey{host, idx}
		l, ok := into[k]
		if !ok {
			l = load{util: -1, mem: -1}
		}
		set(&l, v)
		into[k] = l
	}
	return nil
}

// index maps the sample onto node and device positions (once per refresh
// or cluster change).
func (p *LoadAware) index(cl *model.Cluster) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.builtGen == p.fetchGen && p.epoch == cl.Epoch && len(p.byNode) == len(cl.Nodes) {
		return
	}
	p.byNode = make([][]load, len(cl.Nodes))
	for i, ni := range cl.Nodes {
		host := ni.Node.Labels[HostLabel]
		if host == "" {
			host = ni.Node.Name
		}
		ls := make([]load, len(ni.Node.Devices))
		for d := range ni.Node.Devices {
			l, ok := p.samples[devKey{host, ni.Node.Devices[d].Index}]
			if !ok {
				l = load{util: -1, mem: -1}
			}
			ls[d] = l
		}
		p.byNode[i] = ls
	}
	p.builtGen, p.epoch = p.fetchGen, cl.Epoch
}

func (p *LoadAware) guarded(q model.QoS) bool {
	for _, t := range p.args.GuardTiers {
		if model.QoS(t) == q {
			return true
		}
	}
	return false
}

// saturated reports whether device d of node i is saturated in reality.
func (p *LoadAware) saturated(i, d int) bool {
	if i >= len(p.byNode) || d >= len(p.byNode[i]) {
		return false
	}
	l := p.byNode[i][d]
	return l.util >= p.args.SaturatedUtil || l.mem >= p.args.SaturatedMemory
}

// Filter refuses a node without enough unsaturated devices.
func (p *LoadAware) Filter(_ context.Context, c *framework.Cycle, n *model.NodeInfo) framework.Status {
	if c.Req.DeviceCount == 0 || !p.guarded(c.Req.QoS) {
		return framework.OK
	}
	free := 0
	for d := range n.Node.Devices {
		if !p.saturated(n.Index, d) {
			free++
		}
	}
	if free < c.Req.DeviceCount {
		return framework.Never(reasonSaturated)
	}
	return framework.OK
}

// Assign is ResourceFit's device choice without saturated devices.
func (p *LoadAware) Assign(_ context.Context, c *framework.Cycle, n *model.NodeInfo, out *framework.Assignment) framework.Status {
	r := c.Req
	if r.DeviceCount == 0 {
		return framework.OK
	}
	p.cands = fittingDevices(c, n, p.cands[:0])
	if p.guarded(r.QoS) {
		k := 0
		for _, cd := range p.cands {
			if !p.saturated(n.Index, cd.dev) {
				p.cands[k] = cd
				k++
			}
		}
		p.cands = p.cands[:k]
	}
	if len(p.cands) < r.DeviceCount {
		return framework.Reject(reasonSlice)
	}
	pickSet(n, p.cands, r.DeviceCount, p.args.Strategy == "binpack", r.RDMA, out)
	return framework.OK
}

// Score favours idle devices: 100 × (1 − mean measured utilisation).
func (p *LoadAware) Score(_ context.Context, _ *framework.Cycle, n *model.NodeInfo, a *framework.Assignment) (float64, framework.Status) {
	return idleScore(p.byNodeAt(n.Index), a.Slices), framework.OK
}

func (p *LoadAware) byNodeAt(i int) []load {
	if i < len(p.byNode) {
		return p.byNode[i]
	}
	return nil
}

// idleScore is the pure scoring function: unknown devices count 0.5.
func idleScore(ls []load, slices []model.Slice) float64 {
	if len(slices) == 0 {
		return 50
	}
	sum := 0.0
	for _, s := range slices {
		u := 0.5
		if s.Device < len(ls) && ls[s.Device].util >= 0 {
			u = min(ls[s.Device].util, 1)
		}
		sum += u
	}
	return 100 * (1 - sum/float64(len(slices)))
}
