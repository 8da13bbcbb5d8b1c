package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/heteroflow/heteroflow/receivers/inventory"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

// The heterogeneous benchmark: the public traces are NVIDIA-only, so
// Heterogenize turns an openb node and pod list into a mixed fleet and a
// workload with vendor, model and QoS constraints. Every device takes its
// vendor's rules from the vendor catalog (inventory.IsolationFor): MIG
// profiles on A100/H100, vNPU templates on Ascend, driver-limited and
// shared slices where the vendor has them, whole cards only on Biren.
// Deterministic by seed: the same inputs and seed give the same files.

// HeteroClass is one accelerator model of the generated fleet.
type HeteroClass struct {
	Vendor    string  `json:"vendor"`
	Model     string  `json:"model"`
	MemoryMiB int64   `json:"memory_mib"`
	Share     float64 `json:"share"` // share of the GPU nodes
}

// HeteroFleet is the fleet mix: shares of the openb GPU nodes per model.
// Memory sizes are the models' public figures.
var HeteroFleet = []HeteroClass{
	{inventory.VendorNVIDIA, "A100-SXM4-80GB", 81920, 0.20}, // MIG: 1g.10gb … 7g.80gb
	{inventory.VendorNVIDIA, "H100-SXM5-80GB", 81920, 0.10}, // MIG
	{inventory.VendorNVIDIA, "T4", 15360, 0.15},             // HAMi-core / sharing, no partitions
	{inventory.VendorAscend, "910B2", 65536, 0.20},          // vNPU vir03/vir06/vir12, no Silver
	{inventory.VendorAscend, "310P3", 24576, 0.05},          // vNPU vir01/vir02/vir04
	{inventory.VendorCambricon, "MLU370-X8", 49152, 0.10},   // env-limits Silver, Gold whole card
	{inventory.VendorHygon, "K100_AI", 65536, 0.10},         // HAMi-core Silver, Gold whole card
	{inventory.VendorBiren, "BR104", 32768, 0.10},           // whole cards only
}

// Task mix of the generated workload (fractions of the GPU tasks).
const (
	heteroVendorPinned = 0.30 // tasks that name a vendor
	heteroModelPinned  = 0.15 // tasks that name one model
	heteroGoldFraction = 0.30 // fractional tasks asking for a hardware partition
	heteroBronzeFrac   = 0.35 // fractional tasks that accept software sharing
	heteroGoldWhole    = 0.40 // whole-device tasks asking for Gold (exclusive)
	// heteroRefMiB: a fractional task asks device memory in proportion to
	// its compute share of a 16 GiB card, rounded up to whole GiB.
	heteroRefMiB = 16384
)

// Heterogenize maps an openb fleet and workload onto HeteroFleet with seed.
// Nodes keep their CPU, host memory and device count; each GPU node becomes
// one model of the mix (drawn in proportion to Share, nodes in name order).
// Tasks keep CPU, host memory, device count and compute share; each gets a
// QoS (whole-device: Gold or Silver; fractional: Gold, Silver or Bronze),
// device memory for fractional shares, and for some a vendor or a model.
func Heterogenize(nodes []model.Node, tasks []model.Request, seed uint64) ([]model.Node, []model.Request, error) {
	if len(nodes) == 0 || len(tasks) == 0 {
		return nil, nil, fmt.Errorf("hetero: empty node or task list")
	}
	rng := rand.New(rand.NewPCG(seed, 0x4e7e60))
	sortedNodes := append([]model.Node(nil), nodes...)
	sort.SliceStable(sortedNodes, func(i, j int) bool { return sortedNodes[i].Name < sortedNodes[j].Name })
	// Exact shares: the first ⌊share·N⌉ GPU nodes of a shuffled order per class.
	var gpu []int
	for i := range sortedNodes {
		if len(sortedNodes[i].Devices) > 0 {
			gpu = append(gpu, i)
		}
	}
	rng.Shuffle(len(gpu), func(i, j int) { gpu[i], gpu[j] = gpu[j], gpu[i] })
	classOf := make(map[int]int, len(gpu))
	cut, acc := 0, 0.0
	for c, cls := range HeteroFleet {
		acc += cls.Share
		end := int(math.Round(acc * float64(len(gpu))))
		if c == len(HeteroFleet)-1 {
			end = len(gpu)
		}
		for _, i := range gpu[cut:end] {
			classOf[i] = c
		}
		cut = end
	}
	outNodes := make([]model.Node, len(sortedNodes))
	capacity := map[string]float64{} // devices per vendor, for vendor draws
	for i, n := range sortedNodes {
		nn := model.Node{Name: n.Name, Labels: n.Labels, CPUMilli: n.CPUMilli, MemoryMiB: n.MemoryMiB, RDMA: n.RDMA}
		if c, ok := classOf[i]; ok {
			cls := HeteroFleet[c]
			for d := range n.Devices {
				nn.Devices = append(nn.Devices, model.Device{Index: d, Vendor: cls.Vendor, Model: cls.Model, NUMA: -1,
					MemoryMiB: cls.MemoryMiB, Isolation: inventory.IsolationFor(cls.Vendor, cls.Model)})
			}
			capacity[cls.Vendor] += float64(len(n.Devices))
		}
		if err := nn.Validate(); err != nil {
			return nil, nil, err
		}
		outNodes[i] = nn
	}
	vendors := make([]string, 0, len(capacity))
	for v := range capacity {
		vendors = append(vendors, v)
	}
	sort.Strings(vendors)
	// pickVendor draws one of the allowed vendors by device capacity ("" =
	// none allowed: the task stays unpinned).
	pickVendor := func(allowed map[string]bool) string {
		total := 0.0
		for _, v := range vendors {
			if allowed[v] {
				total += capacity[v]
			}
		}
		if total == 0 {
			return ""
		}
		x := rng.Float64() * total
		last := ""
		for _, v := range vendors {
			if !allowed[v] {
				continue
			}
			if x < capacity[v] {
				return v
			}
			x -= capacity[v]
			last = v
		}
		return last
	}
	sortedTasks := append([]model.Request(nil), tasks...)
	sort.SliceStable(sortedTasks, func(i, j int) bool { return sortedTasks[i].ID < sortedTasks[j].ID })
	out := make([]model.Request, 0, len(sortedTasks))
	for _, t := range sortedTasks {
		r := model.Request{ID: t.ID, CPUMilli: t.CPUMilli, HostMemoryMiB: t.HostMemoryMiB, DeviceCount: t.DeviceCount,
			Priority: t.Priority, QoS: model.QoSSilver}
		if t.DeviceCount > 0 {
			milli := t.ComputeMilli
			r.ComputePercent = float64(milli) / 10
			x := rng.Float64()
			if milli >= model.WholeMilli {
				if x < heteroGoldWhole {
					r.QoS = model.QoSGold
				}
			} else {
				switch {
				case x < heteroGoldFraction:
					r.QoS = model.QoSGold
				case x < heteroGoldFraction+heteroBronzeFrac:
					r.QoS = model.QoSBronze
				}
				gib := int64(math.Ceil(float64(milli) * heteroRefMiB / model.WholeMilli / 1024))
				r.MemoryMiB = max(gib, 1) * 1024
			}
			// A pin names only a model (or vendor) that can host the task on
			// an empty device of its kind: a benchmark of placement, not of
			// requests no fleet could serve (Silver on Ascend, Bronze on Biren).
			switch y := rng.Float64(); {
			case y < heteroModelPinned:
				if ok := hostable(&r); len(ok) > 0 {
					cls := HeteroFleet[ok[rng.IntN(len(ok))]]
					r.Vendor, r.Models = cls.Vendor, []string{cls.Model}
				}
			case y < heteroModelPinned+heteroVendorPinned:
				r.Vendor = pickVendor(hostableVendors(&r))
			}
		}
		if err := r.Normalize(); err != nil {
			return nil, nil, fmt.Errorf("hetero: task %s: %w", t.ID, err)
		}
		out = append(out, r)
	}
	return outNodes, out, nil
}

// hostable lists the HeteroFleet classes on whose empty device one slice
// of r fits (model.FitDevice: tier rules, partitions, memory).
func hostable(r *model.Request) []int {
	probe := *r
	if err := probe.Normalize(); err != nil {
		return nil
	}
	var out []int
	for i, c := range HeteroFleet {
		d := model.Device{Vendor: c.Vendor, Model: c.Model, MemoryMiB: c.MemoryMiB, Isolation: inventory.IsolationFor(c.Vendor, c.Model)}
		st := model.DeviceState{FreeMilli: model.WholeMilli}
		if _, ok := model.FitDevice(&d, &st, &probe, 1000); ok {
			out = append(out, i)
		}
	}
	return out
}

func hostableVendors(r *model.Request) map[string]bool {
	out := map[string]bool{}
	for _, i := range hostable(r) {
		out[HeteroFleet[i].Vendor] = true
	}
	return out
}

// NodeVendor is the vendor of a node's devices: "" for a CPU-only node,
// "mixed" when its devices are of several vendors.
func NodeVendor(n *model.Node) string {
	v := ""
	for i := range n.Devices {
		switch {
		case v == "":
			v = strings.ToLower(n.Devices[i].Vendor)
		case !strings.EqualFold(v, n.Devices[i].Vendor):
			return "mixed"
		}
	}
	return v
}

// NodesForFile drops the isolation tables from nodes written to a file: the
// loader fills them from the vendor catalog, so the file stays small and a
// replay uses the catalog of the binary that runs it.
func NodesForFile(nodes []model.Node) []model.Node {
	out := make([]model.Node, len(nodes))
	for i, n := range nodes {
		n.Devices = append([]model.Device(nil), n.Devices...)
		for j := range n.Devices {
			n.Devices[j].Isolation = inventory.Isolation{}
		}
		out[i] = n
	}
	return out
}
