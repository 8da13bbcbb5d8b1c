package plugins

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"

	"github.com/heteroflow/heteroflow/scheduler/framework"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

// Fragmentation is FGD-class scoring (Weng et al., ATC'23): a node's
// fragmentation is the device capacity that the target workload M cannot
// use, weighted by each shape's popularity —
//
//	F_n = Σ_m p_m · F_n(m),  F_n(m) = all free milli on n if n cannot host m
//	      (CPU short, too few usable devices, wrong model, CPU-only m), else
//	      the free milli of the devices too small for m.
//
// As Assign it puts a task where F grows least (trying each distinct
// device state of the node); as Score it maps that growth Δ to
// 50 − 50·Δ/scale (scale: the largest node's device milli), so shrinking
// fragmentation scores above 50. Per node and spec, the usable-device
// count and the unusable free milli are cached per node version, so a
// candidate is priced in O(|M|) and only changed nodes are recomputed.
type Fragmentation struct {
	h         framework.Handle
	coverage  float64
	demandExp float64
	host      bool
	slicing   bool
	// deadWeight and fillerShare: the dead-space term (see deadspace.go);
	// dead is its table, built with the specs (nil when off).
	deadWeight  float64
	fillerShare float64
	dead        []int64
	// slicingGold: some spec is Gold under slicing rules, so candidates need
	// the devices' states after them (scratch after).
	slicingGold bool
	// pending is the latest workload from SetWorkload (any goroutine);
	// PreScore, on the scheduling goroutine, compiles it into specs. Assign
	// and Score therefore run lock-free: the framework serialises cycles.
	pending atomic.Pointer[[]WorkloadSpec]
	raw     []WorkloadSpec
	specs   []fragSpec

	epoch uint64 // cluster epoch the per-node caches were sized for
	scale float64
	nodes []nodeCache
	homog []int     // node → its single model id, or -1 when mixed
	iso   []isoSets // node → its devices per isolation class (slicing rules)
	cands []cand
	one   [1]model.Slice                             // scratch: one candidate slice, no allocation
	after [model.MaxDevicesPerNode]model.DeviceState // scratch: device states after a candidate (slicing rules)
	nmod  int                                        // cluster model count specs were compiled against
}

type fragSpec struct {
	cpu     int64
	n       int
	milli   int32
	mem     int64
	hostMem int64
	w       int64  // popularity × weightScale: integer, so equal growths tie exactly
	allowed []bool // by model id
	// fit is the per-device request of the shape under slicing rules: a
	// device can take the shape only where model.FitDevice places one slice
	// of it (a Gold shape: a MIG profile / vNPU template with a free start
	// slot, compute and memory, or a whole free device). nil = FGD's rule
	// (free compute and memory, device not held by Gold).
	fit    *model.Request
	gold   bool  // fit is Gold: priced by FitDevice
	cls    uint8 // isolation class (isoAny under FGD's rule)
	memChk int64 // device memory a device must have free: mem, Bronze overcommit applied under slicing rules
}

type fragmentationArgs struct {
	// Coverage of the target workload when built from observed tasks
	// (ObserveWorkload): 1.0 keeps every shape, FGD's paper used 0.95.
	Coverage float64 `yaml:"coverage"`
	// DemandExponent tempers each shape's popularity by its device demand
	// d = devices × compute share: weight ∝ count × d^DemandExponent
	// (renormalised). 0 = FGD's pure popularity. Negative values count
	// capacity stranded for small shapes above capacity stranded for big
	// ones: an 8-device shape at −0.3 weighs 8^−0.3 ≈ 0.54 of its count, a
	// 160-milli shape 0.16^−0.3 ≈ 1.73. Big shapes already protect
	// themselves (a node that cannot host them strands all its free milli
	// for them), so their count alone over-protects empty nodes; measured
	// on the openb traces in docs/BENCHMARKS.md. CPU-only shapes keep
	// their count: every placement changes their F_n by the same amount on
	// every node, so their weight never moves a decision.
	DemandExponent float64 `yaml:"demandExponent"`
	// HostAware also counts device capacity that host memory strands: a
	// node without the host memory for one instance of a shape cannot host
	// it, and a shared shape's usable slices beyond what the free host
	// memory can feed are fragments for it (see specF). false = FGD's rule.
	HostAware bool `yaml:"hostAware"`
	// SlicingRules prices each shape by its tier's placement rules: the
	// workload is grouped by QoS, and a device counts as usable for a shape
	// only if model.FitDevice would place one slice of it there. Capacity
	// left on a MIG GPU or Ascend chip that no demanded MIG profile or vNPU
	// template can take (compute slices, memory slices, start slots) is then
	// fragmented, and partition room that one can take is not; a whole-card
	// Gold shape cannot use a shared device. false = FGD's rule, which sees
	// only free compute and memory. On devices without partitions and a
	// workload of one tier (the openb traces) both rules give the same F.
	SlicingRules bool `yaml:"slicingRules"`
	// DeadSpace (≥ 0, 0 = off) also prices every slice by the dead space it
	// leaves on its device: the part of the device's free compute that no
	// sum of common one-device sizes fills (deadspace.go), weighted
	// DeadSpace milli of fragmentation per milli. FGD's measure sees a 470
	// task on a 530-milli gap (60 left) and a 320 task there (210 left)
	// alike, as long as some rare small shape still fits what is left;
	// this term tells them apart.
	DeadSpace float64 `yaml:"deadSpace"`
	// FillerShare: a one-device size counts as a filler of dead space when
	// at least this share of the target workload asks for it (default
	// 0.015). Rarer sizes cannot fill the gaps that many common tasks leave
	// (the openb traces: 74 tasks of 160 milli against ~950 gaps of 190).
	FillerShare float64 `yaml:"fillerShare"`
}

var (
	_ framework.PreScorePlugin = (*Fragmentation)(nil)
	_ framework.AssignPlugin   = (*Fragmentation)(nil)
	_ framework.ScorePlugin    = (*Fragmentation)(nil)
)

// NewFragmentation builds the plugin; feed it the target workload with
// SetWorkload (the simulator: the trace; the server: recent tasks).
func NewFragmentation(args framework.Args, h framework.Handle) (framework.Plugin, error) {
	a := fragmentationArgs{Coverage: 1, FillerShare: defaultFillerShare}
	if err := args.Decode(&a); err != nil {
		return nil, err
	}
	if a.Coverage <= 0 || a.Coverage > 1 {
		return nil, fmt.Errorf("coverage must be in (0, 1], got %v", a.Coverage)
	}
	if a.DemandExponent < -2 || a.DemandExponent > 2 {
		return nil, fmt.Errorf("demandExponent must be in [-2, 2], got %v", a.DemandExponent)
	}
	if a.DeadSpace < 0 || a.DeadSpace > 1000 {
		return nil, fmt.Errorf("deadSpace must be in [0, 1000], got %v", a.DeadSpace)
	}
	if a.FillerShare <= 0 || a.FillerShare > 1 {
		return nil, fmt.Errorf("fillerShare must be in (0, 1], got %v", a.FillerShare)
	}
	return &Fragmentation{h: h, coverage: a.Coverage, demandExp: a.DemandExponent, host: a.HostAware, slicing: a.SlicingRules,
		deadWeight: a.DeadSpace, fillerShare: a.FillerShare}, nil
}

// ObserveWorkload builds the target workload from observed requests with
// the configured coverage and installs it.
func (p *Fragmentation) ObserveWorkload(reqs []model.Request) error {
	build := BuildWorkload
	if p.slicing {
		build = BuildWorkloadByQoS
	}
	specs, err := build(reqs, p.coverage)
	if err != nil {
		return err
	}
	temperByDemand(specs, p.demandExp)
	return p.SetWorkload(specs)
}

// temperByDemand multiplies each device shape's weight by d^exp, d its
// demand in devices, and renormalises the weights to sum to 1.
// Example: shapes 8×1000 and 1×160, weights 0.5 each, exp −0.3:
// 0.5·8^−0.3 = 0.268 and 0.5·0.16^−0.3 = 0.867 → 0.236 and 0.764.
func temperByDemand(specs []WorkloadSpec, exp float64) {
	if exp == 0 {
		return
	}
	sum := 0.0
	for i := range specs {
		s := &specs[i]
		if d := float64(s.DeviceCount) * float64(s.ComputeMilli) / model.WholeMilli; d > 0 {
			s.Weight *= math.Pow(d, exp)
		}
		sum += s.Weight
	}
	if sum == 0 {
		return
	}
	for i := range specs {
		specs[i].Weight /= sum
	}
}

// Name implements framework.Plugin.
func (*Fragmentation) Name() string { return NameFragmentation }

// SetWorkload replaces the target workload and drops memoised scores.
func (p *Fragmentation) SetWorkload(specs []WorkloadSpec) error {
	for i, s := range specs {
		if s.Weight < 0 || s.DeviceCount < 0 || s.ComputeMilli < 0 || s.ComputeMilli > model.WholeMilli {
			return fmt.Errorf("workload spec %d: weight, device_count ≥ 0 and compute_milli in [0,1000] required", i)
		}
	}
	cp := append([]WorkloadSpec(nil), specs...)
	p.pending.Store(&cp)
	p.h.Invalidate()
	return nil
}

// PreScore sizes the per-node caches and compiles M against the cluster's
// model table when either changed.
func (p *Fragmentation) PreScore(_ context.Context, c *framework.Cycle) framework.Status {
	cl := c.Cluster
	if w := p.pending.Swap(nil); w != nil {
		p.raw, p.nmod = *w, -1
	}
	if p.epoch != cl.Epoch {
		p.epoch = cl.Epoch
		p.nodes = make([]nodeCache, len(cl.Nodes))
		p.homog = make([]int, len(cl.Nodes))
		p.iso = make([]isoSets, len(cl.Nodes))
		p.scale = model.WholeMilli
		for i, n := range cl.Nodes {
			p.homog[i] = homogeneousModel(n.Node)
			p.iso[i] = nodeIsoSets(n.Node)
			p.scale = max(p.scale, float64(len(n.Devices)*model.WholeMilli))
		}
		p.nmod = -1
	}
	if p.nmod != len(cl.Models()) {
		p.compileLocked(cl.Models())
	}
	return framework.OK
}

// applySlicing sets the spec's tier rules: Gold is priced by FitDevice,
// Silver and Bronze by FGD's rule on the devices of their isolation class,
// with Bronze memory overcommitted by ratio.
func (m *fragSpec) applySlicing(s WorkloadSpec, ratio int64) {
	m.fit = sliceRequest(s)
	if m.fit == nil {
		return
	}
	switch m.fit.QoS {
	case model.QoSGold:
		m.gold = true
	case model.QoSSilver:
		m.cls = isoSilver
		if m.n > 1 {
			m.cls = isoSilverN
		}
	default:
		m.cls = isoBronze
	}
	m.memChk = model.AccountedMiB(&model.Slice{MemoryMiB: m.mem, QoS: m.fit.QoS}, ratio)
}

// sliceRequest is one device's slice of a shape, as model.FitDevice takes
// it: the shape's compute and memory per device at its tier.
func sliceRequest(s WorkloadSpec) *model.Request {
	qos := s.QoS
	if qos == "" {
		qos = model.QoSSilver
	}
	r := &model.Request{DeviceCount: s.DeviceCount, MemoryMiB: s.MemoryMiB, ComputePercent: float64(s.ComputeMilli) / 10, QoS: qos}
	if r.Normalize() != nil {
		return nil // unreachable for a spec SetWorkload accepted; FGD's rule then
	}
	return r
}

func homogeneousModel(n *model.Node) int {
	if len(n.Devices) == 0 {
		return -1
	}
	id := n.Devices[0].ModelID()
	for i := range n.Devices {
		if n.Devices[i].ModelID() != id {
			return -1
		}
	}
	return id
}

func (p *Fragmentation) compileLocked(models []model.ModelKey) {
	p.specs = p.specs[:0]
	p.slicingGold = false
	var restrictive [isoClasses]bool // some device of the cluster is outside the class
	for _, sets := range p.iso {
		for c := range sets {
			restrictive[c] = restrictive[c] || sets[c] != ^uint64(0)
		}
	}
	for _, s := range p.raw {
		fs := fragSpec{cpu: s.CPUMilli, n: s.DeviceCount, milli: s.ComputeMilli, mem: s.MemoryMiB, hostMem: s.HostMemoryMiB,
			w:       int64(math.Round(s.Weight * weightScale)),
			allowed: make([]bool, len(models))}
		r := model.Request{Vendor: s.Vendor, Models: s.Models}
		for id, m := range models {
			fs.allowed[id] = r.ModelAllowed(m.Vendor, m.Model)
		}
		fs.memChk = fs.mem
		if p.slicing && s.DeviceCount > 0 {
			fs.applySlicing(s, p.h.Cluster().RatioMilli())
			p.slicingGold = p.slicingGold || fs.gold
			if !restrictive[fs.cls] {
				fs.cls = isoAny // every device of the cluster is of the class: skip the bit test's work
			}
		}
		p.specs = append(p.specs, fs)
	}
	p.dead = nil
	if p.deadWeight > 0 {
		p.dead = deadSpaceTable(p.raw, p.fillerShare)
	}
	p.nodes = make([]nodeCache, len(p.nodes))
	p.nmod = len(models)
}

// Assign implements framework.AssignPlugin.
func (p *Fragmentation) Assign(_ context.Context, c *framework.Cycle, n *model.NodeInfo, out *framework.Assignment) framework.Status {
	r := c.Req
	nc := p.stateLocked(n)
	after := hostState{cpu: n.FreeCPU - r.CPUMilli, mem: n.FreeMem - r.HostMemoryMiB}
	if r.DeviceCount == 0 {
		out.Cost, out.CostBy = float64(p.deltaLocked(n, nc, after, nil, r.QoS, c.Cluster.RatioMilli()))/weightScale, NameFragmentation
		return framework.OK
	}
	p.cands = fittingDevices(c, n, p.cands[:0])
	if len(p.cands) < r.DeviceCount {
		return framework.Reject(reasonSlice)
	}
	ratio := c.Cluster.RatioMilli()
	if r.DeviceCount > 1 {
		pickSet(n, p.cands, r.DeviceCount, true, r.RDMA, out)
		out.Cost, out.CostBy = float64(p.deltaLocked(n, nc, after, out.Slices, r.QoS, ratio))/weightScale, NameFragmentation
		return framework.OK
	}
	// One device: try each distinct free level once (devices with the same
	// free compute and memory give the same Δ); keep the least growth, then
	// the tightest device, then the lowest index.
	best, bestDelta := -1, int64(0)
	for i := range p.cands {
		cd := &p.cands[i]
		dup := false
		for j := 0; j < i; j++ {
			other, this := &n.Devices[p.cands[j].dev], &n.Devices[cd.dev]
			if p.cands[j].free == cd.free && other.MemUsed == this.MemUsed && other.PartMask == this.PartMask && other.PartMem == this.PartMem {
				dup = true
				break
			}
		}
		if dup {
			continue
		}
		p.one[0] = cd.slice
		delta := p.deltaLocked(n, nc, after, p.one[:], r.QoS, ratio)
		if best < 0 || delta < bestDelta || (delta == bestDelta && cd.free < p.cands[best].free) {
			best, bestDelta = i, delta
		}
	}
	out.Slices = append(out.Slices, p.cands[best].slice)
	out.Cost, out.CostBy = float64(bestDelta)/weightScale, NameFragmentation
	return framework.OK
}

// Score implements framework.ScorePlugin.
func (p *Fragmentation) Score(_ context.Context, c *framework.Cycle, n *model.NodeInfo, a *framework.Assignment) (float64, framework.Status) {
	delta := a.Cost
	if a.CostBy != NameFragmentation {
		delta = p.Delta(n, c.Req, a.Slices, c.Cluster.RatioMilli())
	}
	return min(100, max(0, 50-50*delta/p.scale)), framework.OK
}

// Delta is the growth of F_n, in milli-devices, if the slices (and the
// request's CPU) were placed on n. Like NodeFrag it runs on the scheduling
// goroutine (after PreScore), not concurrently with Schedule.
func (p *Fragmentation) Delta(n *model.NodeInfo, r *model.Request, slices []model.Slice, ratioMilli int64) float64 {
	nc := p.stateLocked(n)
	after := hostState{cpu: n.FreeCPU - r.CPUMilli, mem: n.FreeMem - r.HostMemoryMiB}
	return float64(p.deltaLocked(n, nc, after, slices, r.QoS, ratioMilli)) / weightScale
}

// NodeFrag is F_n for n's current state, in milli-devices.
func (p *Fragmentation) NodeFrag(n *model.NodeInfo) float64 {
	return float64(p.stateLocked(n).f) / weightScale
}

// String describes the loaded workload (for logs).
func (p *Fragmentation) String() string {
	return fmt.Sprintf("Fragmentation(%d shapes)", len(p.specs))
}
