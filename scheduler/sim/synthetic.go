package sim

import (
	"fmt"
	"math/rand/v2"

	"github.com/heteroflow/heteroflow/receivers/inventory"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

// syntheticKinds is the device mix of the synthetic heterogeneous cluster:
// MIG-capable NVIDIA, Ascend vNPU, plain NVIDIA, Cambricon (whole-device
// gold), AMD — every isolation path of model.FitDevice is exercised.
var syntheticKinds = []struct {
	vendor, model string
	memMiB        int64
	link          inventory.LinkType
}{
	{inventory.VendorNVIDIA, "A100-SXM4-80GB", 81920, inventory.LinkNVLink},
	{inventory.VendorNVIDIA, "H100-SXM5-80GB", 81920, inventory.LinkNVLink},
	{inventory.VendorAscend, "910B2", 65536, inventory.LinkHCCS},
	{inventory.VendorNVIDIA, "T4", 16384, inventory.LinkPIX},
	{inventory.VendorCambricon, "MLU370-X8", 49152, inventory.LinkMLULink},
	{inventory.VendorAMD, "MI210", 65536, inventory.LinkXGMI},
}

// SyntheticNodes builds n heterogeneous 8-device nodes: two NUMA nodes of
// four devices, fast links within pairs, every third node on RoCE.
func SyntheticNodes(n int) []model.Node {
	out := make([]model.Node, 0, n)
	for i := 0; i < n; i++ {
		k := syntheticKinds[i%len(syntheticKinds)]
		nd := model.Node{Name: fmt.Sprintf("syn-%05d", i), CPUMilli: 128000, MemoryMiB: 1 << 20}
		if i%3 == 0 {
			nd.RDMA = model.RDMARoCE
		}
		for d := 0; d < 8; d++ {
			nd.Devices = append(nd.Devices, model.Device{Index: d, Vendor: k.vendor, Model: k.model, MemoryMiB: k.memMiB,
				NUMA: d / 4, Links: []inventory.Link{{Peer: d ^ 1, Type: k.link}, {Peer: d ^ 2, Type: inventory.LinkPXB}},
				Isolation: inventory.IsolationFor(k.vendor, k.model)})
		}
		out = append(out, nd)
	}
	return out
}

// SyntheticShapes draws `shapes` distinct task shapes (QoS tiers, shared
// and whole devices, multi-device, CPU-only, model filters, RDMA) and then
// `tasks` tasks from them with a skewed popularity, as real queues repeat
// a few shapes often (openb: 90–313 shapes for ~8,000 tasks).
func SyntheticShapes(shapes, tasks int, seed uint64) []model.Request {
	rng := rand.New(rand.NewPCG(seed, 11))
	pool := make([]model.Request, shapes)
	for i := range pool {
		r := model.Request{CPUMilli: int64(1000 * (1 + rng.IntN(16))), HostMemoryMiB: int64(1024 * rng.IntN(64))}
		switch k := rng.IntN(20); {
		case k < 2: // CPU only
		case k < 10:
			r.DeviceCount, r.ComputePercent, r.MemoryMiB = 1, float64(5+rng.IntN(90)), int64(512*rng.IntN(32))
		case k < 16:
			r.DeviceCount, r.ComputePercent = 1, 100
		default:
			r.DeviceCount, r.ComputePercent = []int{2, 4, 8}[rng.IntN(3)], 100
		}
		r.QoS = []model.QoS{model.QoSGold, model.QoSSilver, model.QoSSilver, model.QoSBronze}[rng.IntN(4)]
		if rng.IntN(5) == 0 {
			k := syntheticKinds[rng.IntN(len(syntheticKinds))]
			r.Vendor, r.Models = k.vendor, []string{k.model}
		}
		r.RDMA = r.DeviceCount >= 4 && rng.IntN(2) == 0
		pool[i] = r
	}
	out := make([]model.Request, tasks)
	for i := range out {
		// Squaring a uniform draw skews popularity towards low indices.
		u := rng.Float64()
		out[i] = pool[int(u*u*float64(shapes))]
		out[i].ID = fmt.Sprintf("syn-task-%08d", i)
		if err := out[i].Normalize(); err != nil {
			panic(err) // programmer error: the generator makes valid requests
		}
	}
	return out
}
