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
	// {0,1}: NVLink (1.0), same NUMA → 100·(0.6·1 + 0.4) = 100.
	require.InDelta(t, 100, topologyScore(ni.Node, slicesOn(0, 1), false), 1e-9)
	// {1,2}: PXB (0.4), two NUMA nodes → 100·0.6·0.4 = 24.
	require.InDelta(t, 24, topologyScore(ni.Node, slicesOn(1, 2), false), 1e-9)
	require.InDelta(t, 100, topologyScore(ni.Node, slicesOn(3), false), 1e-9)
	// pickSet: device 0 is busiest (tightest) → seed 0, partner 1 (NVLink).
	place(t, cl, "x", "a", 0, map[int]int32{0: 200, 3: 100})
	var cands []cand
	r := &model.Request{ID: "r", DeviceCount: 2, ComputePercent: 50, QoS: model.QoSSilver}
	cands = fittingDevices(cycle(t, cl, r), ni, cands)
	var a framework.Assignment
	pickSet(ni, cands, 2, true, false, &a)
	require.Equal(t, []int{0, 1}, []int{a.Slices[0].Device, a.Slices[1].Device})
}

// TestTopologyPrefersDevicesNearTheRDMAAdapter: an 8-GPU PCIe node, NUMA 0 =
// {0..3}, NUMA 1 = {4..7}, PIX pairs 0–1 and 6–7, one active adapter under
// the switch of GPUs 6 and 7 (4 and 5 on its NUMA node, 0–3 across the
// socket). A 2-GPU task that asks for RDMA gets {6,7}; the same task without
// RDMA keeps the packing order and gets {0,1}.
func TestTopologyPrefersDevicesNearTheRDMAAdapter(t *testing.T) {
	t.Parallel()
	n := gpuNode("a", 64000, "H100 80GB HBM3", 8)
	n.RDMA = model.RDMAInfiniBand
	for i := range n.Devices {
		n.Devices[i].NUMA = i / 4
	}
	n.Devices[0].Links = []inventory.Link{{Peer: 1, Type: inventory.LinkPIX}}
	n.Devices[1].Links = []inventory.Link{{Peer: 0, Type: inventory.LinkPIX}}
	n.Devices[6].Links = []inventory.Link{{Peer: 7, Type: inventory.LinkPIX}}
	n.Devices[7].Links = []inventory.Link{{Peer: 6, Type: inventory.LinkPIX}}
	var aff []inventory.RDMAAffinity
	for i, l := range []inventory.LinkType{"sys", "sys", "sys", "sys", "node", "node", "pix", "pix"} {
		aff = append(aff, inventory.RDMAAffinity{Device: i, Link: l})
	}
	model.AttachRDMA(n.Devices, []inventory.RDMADevice{
		{Name: "mlx5_0", Kind: inventory.RDMAInfiniBand, Ports: []inventory.RDMAPort{{Port: 1, State: "ACTIVE"}}, Affinity: aff},
		// A down adapter next to GPUs 0 and 1 does not count.
		{Name: "mlx5_1", Kind: inventory.RDMAInfiniBand, Ports: []inventory.RDMAPort{{Port: 1, State: "DOWN"}},
			Affinity: []inventory.RDMAAffinity{{Device: 0, Link: "pix"}, {Device: 1, Link: "pix"}}},
	})
	require.Equal(t, inventory.LinkType("sys"), n.Devices[0].RDMALink)
	require.Equal(t, inventory.LinkType("pix"), n.Devices[7].RDMALink)
	cl := newCluster(t, n)
	ni := cl.Nodes[0]
	// Without RDMA both PIX pairs score 100·(0.6·0.5 + 0.4) = 70.
	require.InDelta(t, 70, topologyScore(ni.Node, slicesOn(0, 1), false), 1e-9)
	require.InDelta(t, 70, topologyScore(ni.Node, slicesOn(6, 7), false), 1e-9)
	// With RDMA: {0,1} 100·(0.45·0.5 + 0.3 + 0.25·0) = 52.5;
	// {6,7} 100·(0.45·0.5 + 0.3 + 0.25·1) = 77.5; {4,5} (no link, node) 100·(0.3 + 0.25·0.4) = 40.
	require.InDelta(t, 52.5, topologyScore(ni.Node, slicesOn(0, 1), true), 1e-9)
	require.InDelta(t, 77.5, topologyScore(ni.Node, slicesOn(6, 7), true), 1e-9)
	require.InDelta(t, 40, topologyScore(ni.Node, slicesOn(4, 5), true), 1e-9)

	pick := func(rdma bool) []int {
		r := &model.Request{ID: "r", DeviceCount: 2, ComputePercent: 100, QoS: model.QoSGold, RDMA: rdma}
		cands := fittingDevices(cycle(t, cl, r), ni, nil)
		var a framework.Assignment
		pickSet(ni, cands, 2, true, rdma, &a)
		return []int{a.Slices[0].Device, a.Slices[1].Device}
	}
	require.Equal(t, []int{6, 7}, pick(true))
	require.Equal(t, []int{0, 1}, pick(false))
}

// slicesOn is one slice per device position.
func slicesOn(ds ...int) []model.Slice {
	var out []model.Slice
	for _, d := range ds {
		out = append(out, model.Slice{Device: d})
	}
	return out
}
