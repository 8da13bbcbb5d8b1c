package plugins

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/receivers/inventory"
	"github.com/heteroflow/heteroflow/scheduler/framework"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

func TestTopology(t *testing.T) {
	t.Parallel()
	n := gpuNode("a", 64000, "A100-SXM4-80GB", 4)
	// 0–1 and 2–3 NVLink pairs; NUMA 0 = {0,1}, NUMA 1 = {2,3}; 1–2 PCIe PXB.
	link := func(peer int, ty inventory.LinkType) []inventory.Link {
		return []inventory.Link{{Peer: peer, Type: ty}}
	}
	n.Devices[0].Links, n.Devices[0].NUMA = link(1, inventory.LinkNVLink), 0
	n.Devices[1].Links, n.Devices[1].NUMA = append(link(0, inventory.LinkNVLink), inventory.Link{Peer: 2, Type: inventory.LinkPXB}), 0
	n.Devices[2].Links, n.Devices[2].NUMA = append(link(3, inventory.LinkNVLink), inventory.Link{Peer: 1, Type: inventory.LinkPXB}), 1
	n.Devices[3].Links, n.Devices[3].NUMA = link(2, inventory.LinkNVLink), 1
	cl := newCluster(t, n)
	ni := cl.Nodes[0]
	sl := func(ds ...int) []model.Slice {
		var out []model.Slice
		for _, d := range ds {
			out = append(out, model.Slice{Device: d})
		}
		return out
	}
	// {0,1}: NVLink (1.0), same NUMA → 100·(0.6·1 + 0.4) = 100.
	require.InDelta(t, 100, topologyScore(ni.Node, sl(0, 1)), 1e-9)
	// {1,2}: PXB (0.4), two NUMA nodes → 100·0.6·0.4 = 24.
	require.InDelta(t, 24, topologyScore(ni.Node, sl(1, 2)), 1e-9)
	require.InDelta(t, 100, topologyScore(ni.Node, sl(3)), 1e-9)
	// pickSet: device 0 is busiest (tightest) → seed 0, partner 1 (NVLink).
	place(t, cl, "x", "a", 0, map[int]int32{0: 200, 3: 100})
	var cands []cand
	r := &model.Request{ID: "r", DeviceCount: 2, ComputePercent: 50, QoS: model.QoSSilver}
	cands = fittingDevices(cycle(t, cl, r), ni, cands)
	var a framework.Assignment
	pickSet(ni, cands, 2, true, &a)
	require.Equal(t, []int{0, 1}, []int{a.Slices[0].Device, a.Slices[1].Device})
}
