package sim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"time"

	"github.com/heteroflow/heteroflow/scheduler/framework"
	"github.com/heteroflow/heteroflow/scheduler/model"
	"github.com/heteroflow/heteroflow/scheduler/plugins"
)

// Config of a replay.
type Config struct {
	Nodes   []model.Node
	Tasks   []model.Request
	Profile framework.Profile
	// Tune appends sampled tasks until demand reaches Tune × capacity
	// (REFERENCE.md step 3); 0 or 1 appends none.
	Tune float64
	// MetricCoverage is the target-workload coverage of the reported
	// fragmentation metric (REFERENCE.md: 0.95), independent of the
	// profile's own Fragmentation coverage.
	MetricCoverage float64
	// SlicingMetric measures fragmentation under slicing rules (capacity
	// that no demanded MIG profile or vNPU template can take is fragmented;
	// see the Fragmentation plugin's slicingRules) instead of FGD's rule.
	// Identical on fleets without partitions and workloads of one tier.
	SlicingMetric bool
}

// RunResult is one seed's outcome.
type RunResult struct {
	Seed uint64
	// Alloc and Frag: bucket (integer % of capacity arrived) → mean
	// allocation ratio and fragmentation, % of capacity, over the events
	// in that bucket.
	Alloc, Frag map[int]float64
	// ByVendor: the same per vendor (fleets of more than one vendor), each
	// as % of that vendor's device capacity; buckets are the whole
	// cluster's arrived demand.
	ByVendor map[string]*VendorRun
	Tasks    int
	Failed   int
	// FailedDemand: GPU demand of the failed tasks, % of capacity, by
	// task class (see taskClass) — where a policy loses its allocation.
	FailedDemand map[string]float64
	Seconds      float64 // time spent in Schedule
}

// VendorRun is one vendor's series of one run.
type VendorRun struct {
	Devices     int
	Alloc, Frag map[int]float64
}

// PerSecond is the placement throughput (decisions per second).
func (r RunResult) PerSecond() float64 {
	if r.Seconds == 0 {
		return 0
	}
	return float64(r.Tasks) / r.Seconds
}

func demand(r *model.Request) int64 { return int64(r.DeviceCount) * int64(r.ComputeMilli) }

// Order returns the tasks of one run: sorted by name, shuffled with the
// seed, followed by the tune tasks sampled with replacement from the whole
// trace, stopping at (and leaving out) the first that would push demand past
// tune × capacity.
func Order(tasks []model.Request, seed uint64, tune float64, capacity int64) []model.Request {
	sorted := append([]model.Request(nil), tasks...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].ID < sorted[j].ID })
	out := append([]model.Request(nil), sorted...)
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	var total int64
	anyDemand := false
	for i := range out {
		total += demand(&out[i])
		anyDemand = anyDemand || demand(&out[i]) > 0
	}
	if tune <= 1 || !anyDemand || capacity == 0 {
		return out
	}
	limit := int64(math.Floor(tune * float64(capacity)))
	for k := 0; ; k++ {
		t := sorted[rng.IntN(len(sorted))]
		if total+demand(&t) > limit {
			break
		}
		total += demand(&t)
		t.ID = t.ID + "-tune-" + strconv.Itoa(k)
		out = append(out, t)
	}
	return out
}

// Task classes of the failure breakdown.
const (
	ClassShared = "shared" // one device, less than all of it
	ClassWhole  = "whole"  // one whole device
	ClassMulti  = "multi"  // several devices
)

func taskClass(r *model.Request) string {
	switch {
	case r.DeviceCount > 1:
		return ClassMulti
	case r.ComputeMilli < model.WholeMilli:
		return ClassShared
	}
	return ClassWhole
}

// Run replays one seed.
func Run(ctx context.Context, cfg Config, seed uint64) (RunResult, error) {
	cl, err := model.NewCluster(1)
	if err != nil {
		return RunResult{}, err
	}
	for _, n := range cfg.Nodes {
		if _, err := cl.AddNode(n); err != nil {
			return RunResult{}, err
		}
	}
	fw, err := framework.New(plugins.Registry(), cfg.Profile, cl, framework.Options{Seed: seed})
	if err != nil {
		return RunResult{}, err
	}
	if p, ok := fw.Plugin(plugins.NameFragmentation); ok {
		if err := p.(*plugins.Fragmentation).ObserveWorkload(cfg.Tasks); err != nil {
			return RunResult{}, err
		}
	}
	capacity, _ := cl.Capacity()
	if capacity == 0 {
		return RunResult{}, fmt.Errorf("cluster has no devices")
	}
	cov := cfg.MetricCoverage
	if cov == 0 {
		cov = 0.95
	}
	newMeter := plugins.NewFragMeter
	if cfg.SlicingMetric {
		newMeter = plugins.NewSlicingFragMeter
	}
	meter, err := newMeter(cl, cfg.Tasks, cov)
	if err != nil {
		return RunResult{}, err
	}
	order := Order(cfg.Tasks, seed, cfg.Tune, capacity)
	res := RunResult{Seed: seed, Tasks: len(order), Alloc: map[int]float64{}, Frag: map[int]float64{}, FailedDemand: map[string]float64{}}
	vs := newVendorSeries(cl, meter)
	if len(vs.names) > 1 {
		res.ByVendor = map[string]*VendorRun{}
		for v, name := range vs.names {
			res.ByVendor[name] = &VendorRun{Devices: int(vs.capacity[v] / model.WholeMilli), Alloc: map[int]float64{}, Frag: map[int]float64{}}
		}
	}
	counts := map[int]int{}
	var arrived, allocated int64
	var spent time.Duration
	for i := range order {
		t := &order[i]
		arrived += demand(t)
		start := time.Now()
		r, err := fw.Schedule(ctx, t, framework.ScheduleOptions{})
		spent += time.Since(start)
		switch {
		case errors.Is(err, framework.ErrUnschedulable):
			res.Failed++
			if d := demand(t); d > 0 {
				res.FailedDemand[taskClass(t)] += 100 * float64(d) / float64(capacity)
			}
		case err != nil:
			return RunResult{}, fmt.Errorf("task %s: %w", t.ID, err)
		default:
			ni, _ := cl.Node(r.Placement.Node)
			for _, s := range r.Placement.Slices {
				allocated += int64(s.ComputeMilli)
			}
			vs.placed(ni, r.Placement.Slices)
		}
		b := int(math.Round(100 * float64(arrived) / float64(capacity)))
		counts[b]++
		res.Alloc[b] += 100 * float64(allocated) / float64(capacity)
		res.Frag[b] += 100 * meter.Total() / float64(capacity)
		for v, name := range vs.names {
			if vr := res.ByVendor[name]; vr != nil && vs.capacity[v] > 0 {
				vr.Alloc[b] += 100 * float64(vs.allocated[v]) / float64(vs.capacity[v])
				vr.Frag[b] += 100 * vs.frag[v] / float64(vs.capacity[v])
			}
		}
	}
	for b, n := range counts {
		res.Alloc[b] /= float64(n)
		res.Frag[b] /= float64(n)
		for _, vr := range res.ByVendor {
			vr.Alloc[b] /= float64(n)
			vr.Frag[b] /= float64(n)
		}
	}
	res.Seconds = spent.Seconds()
	if err := cl.CheckInvariants(); err != nil {
		return RunResult{}, fmt.Errorf("after replay: %w", err)
	}
	return res, nil
}

// vendorSeries keeps allocation and fragmentation per vendor as a run
// places tasks (node vendors from NodeVendor; CPU-only nodes count under "").
type vendorSeries struct {
	meter     *plugins.FragMeter
	names     []string // vendors with devices, sorted
	ofNode    []int    // node index → position in names, -1 without devices
	capacity  []int64
	allocated []int64
	frag      []float64
}

func newVendorSeries(cl *model.Cluster, meter *plugins.FragMeter) *vendorSeries {
	vs := &vendorSeries{meter: meter, ofNode: make([]int, len(cl.Nodes))}
	pos := map[string]int{}
	for _, ni := range cl.Nodes {
		if v := NodeVendor(ni.Node); v != "" {
			pos[v] = 0
		}
	}
	for v := range pos {
		vs.names = append(vs.names, v)
	}
	sort.Strings(vs.names)
	for i, v := range vs.names {
		pos[v] = i
	}
	vs.capacity = make([]int64, len(vs.names))
	vs.allocated = make([]int64, len(vs.names))
	vs.frag = make([]float64, len(vs.names))
	for i, ni := range cl.Nodes {
		v := NodeVendor(ni.Node)
		if v == "" {
			vs.ofNode[i] = -1
			continue
		}
		vs.ofNode[i] = pos[v]
		vs.capacity[pos[v]] += int64(len(ni.Devices)) * model.WholeMilli
		vs.frag[pos[v]] += meter.Node(i)
	}
	return vs
}

// placed records a placement on ni and refreshes the meter's share of it.
func (vs *vendorSeries) placed(ni *model.NodeInfo, slices []model.Slice) {
	before := vs.meter.Node(ni.Index)
	vs.meter.Update(ni)
	v := vs.ofNode[ni.Index]
	if v < 0 {
		return
	}
	vs.frag[v] += vs.meter.Node(ni.Index) - before
	for i := range slices {
		vs.allocated[v] += int64(slices[i].ComputeMilli)
	}
}
