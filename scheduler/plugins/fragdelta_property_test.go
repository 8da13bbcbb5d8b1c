package plugins

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/receivers/inventory"
	"github.com/heteroflow/heteroflow/scheduler/framework"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

// TestFragDeltaIsTheChangeOfF: the incremental price of a placement
// (Delta, from the node's cached aggregates and only the devices the
// placement takes) equals F of the node once placed minus F before, on
// nodes with MIG profiles, vNPU templates, whole-card-only and shared
// devices in random states, for Gold, Silver and Bronze shapes of one and
// several devices, with and without slicing rules.
func TestFragDeltaIsTheChangeOfF(t *testing.T) {
	t.Parallel()
	kinds := []struct {
		vendor, model string
		mem           int64
	}{
		{inventory.VendorNVIDIA, "A100-SXM4-80GB", 81920},
		{inventory.VendorAscend, "910B2", 65536},
		{inventory.VendorCambricon, "MLU370-X8", 49152},
		{inventory.VendorNVIDIA, "T4", 15360},
	}
	shapes := []model.Request{
		{QoS: model.QoSGold, ComputePercent: 14.2, MemoryMiB: 10240, DeviceCount: 1},
		{QoS: model.QoSGold, ComputePercent: 42.8, MemoryMiB: 40960, DeviceCount: 1},
		{QoS: model.QoSGold, ComputePercent: 25, MemoryMiB: 16384, DeviceCount: 1},
		{QoS: model.QoSGold, ComputePercent: 100, DeviceCount: 1},
		{QoS: model.QoSGold, ComputePercent: 100, DeviceCount: 2},
		{QoS: model.QoSSilver, ComputePercent: 30, MemoryMiB: 4096, DeviceCount: 1, BestEffort: true},
		{QoS: model.QoSBronze, ComputePercent: 50, MemoryMiB: 8192, DeviceCount: 1},
		{QoS: model.QoSBronze, ComputePercent: 20, MemoryMiB: 2048, DeviceCount: 1},
		{QoS: model.QoSBronze, ComputePercent: 100, DeviceCount: 4},
	}
	var demand []WorkloadSpec
	for _, r := range shapes {
		require.NoError(t, r.Normalize())
		demand = append(demand, WorkloadSpec{DeviceCount: r.DeviceCount, ComputeMilli: r.ComputeMilli, MemoryMiB: r.MemoryMiB,
			QoS: r.QoS, Weight: 1 / float64(len(shapes))})
	}
	for _, slicing := range []bool{true, false} {
		rng := rand.New(rand.NewPCG(7, 11))
		var nodes []model.Node
		for i := range 24 {
			k := kinds[i%len(kinds)]
			n := model.Node{Name: fmt.Sprintf("n%d", i), CPUMilli: 64000, MemoryMiB: 1 << 20}
			for d := range 4 {
				n.Devices = append(n.Devices, model.Device{Index: d, Vendor: k.vendor, Model: k.model, NUMA: -1,
					MemoryMiB: k.mem, Isolation: inventory.IsolationFor(k.vendor, k.model)})
			}
			nodes = append(nodes, n)
		}
		cl := newCluster(t, nodes...)
		f := fragWith(t, cl, slicing, demand)
		checked := 0
		for step := range 600 {
			r := shapes[rng.IntN(len(shapes))]
			r.ID = fmt.Sprintf("t%d", step)
			c := cycle(t, cl, &r)
			ni := cl.Nodes[rng.IntN(len(cl.Nodes))]
			var a framework.Assignment
			if !f.Assign(context.Background(), c, ni, &a).IsSuccess() || len(a.Slices) == 0 {
				continue
			}
			before := f.NodeFrag(ni)
			delta := f.Delta(ni, &r, a.Slices, cl.RatioMilli())
			require.NoError(t, cl.Assign(model.Placement{TaskID: r.ID, Node: ni.Node.Name, Slices: a.Slices}))
			require.InDelta(t, f.NodeFrag(ni)-before, delta, 1e-6, "slicing %v, step %d, %s on %s", slicing, step, r.ID, ni.Node.Name)
			checked++
			if rng.IntN(3) == 0 { // free capacity again now and then, so states stay varied
				ps := cl.Placements()
				require.NoError(t, cl.Release(ps[rng.IntN(len(ps))].TaskID))
			}
		}
		require.Greater(t, checked, 200, "enough placements priced")
	}
}
