package scheduling

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// TestNodeRDMAFromInventory: the RDMA plugin's node kind comes from the
// adapters the agent detected; an "rdma" label still overrides it.
func TestNodeRDMAFromInventory(t *testing.T) {
	t.Parallel()
	model := "NVIDIA H100 80GB HBM3"
	mem := int64(81559)
	adapter := func(kind, state string) inventory.RDMADevice {
		return inventory.RDMADevice{Name: "mlx5_0", Kind: kind, Ports: []inventory.RDMAPort{{Port: 1, State: state}}}
	}
	node := func(labels map[string]string, nics ...inventory.RDMADevice) *controlplane.Node {
		return &controlplane.Node{ID: "n1", Hostname: "h1", CPUCount: 8, MemoryTotalMiB: 1024, Labels: labels,
			Inventory: []inventory.Snapshot{{Vendor: "nvidia", RDMA: nics,
				Devices: []inventory.Device{{Index: 0, Model: model, MemoryTotalMiB: &mem}}}}}
	}
	for _, tc := range []struct {
		name string
		n    *controlplane.Node
		want string
	}{
		{"none", node(nil), ""},
		{"infiniband up", node(nil, adapter(inventory.RDMAInfiniBand, "ACTIVE")), "infiniband"},
		{"roce up", node(nil, adapter(inventory.RDMARoCE, "ACTIVE")), "roce"},
		{"ports down", node(nil, adapter(inventory.RDMAInfiniBand, "DOWN")), ""},
		{"ib wins over roce", node(nil, adapter(inventory.RDMARoCE, "ACTIVE"), adapter(inventory.RDMAInfiniBand, "ACTIVE")), "infiniband"},
		{"label overrides", node(map[string]string{"rdma": "roce"}, adapter(inventory.RDMAInfiniBand, "ACTIVE")), "roce"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			mn, shape, err := modelNode(tc.n)
			require.NoError(t, err)
			require.Equal(t, tc.want, mn.RDMA)
			require.Contains(t, shape, "/"+tc.want+"/")
		})
	}
}

// TestNodeDevicesCarryTheirPathToTheAdapter: each device gets the path to
// its closest active adapter from the inventory's affinity (the Topology
// plugin's input), and a change of it changes the node's shape.
func TestNodeDevicesCarryTheirPathToTheAdapter(t *testing.T) {
	t.Parallel()
	mem := int64(81559)
	node := func(aff ...inventory.RDMAAffinity) *controlplane.Node {
		return &controlplane.Node{ID: "n1", Hostname: "h1", CPUCount: 8, MemoryTotalMiB: 1024,
			Inventory: []inventory.Snapshot{{Vendor: "nvidia",
				RDMA: []inventory.RDMADevice{{Name: "mlx5_0", Kind: inventory.RDMAInfiniBand,
					Ports: []inventory.RDMAPort{{Port: 1, State: "ACTIVE"}}, Affinity: aff}},
				Devices: []inventory.Device{{Index: 0, Model: "NVIDIA H100 80GB HBM3", MemoryTotalMiB: &mem},
					{Index: 1, Model: "NVIDIA H100 80GB HBM3", MemoryTotalMiB: &mem}}}}}
	}
	near, shapeNear, err := modelNode(node(inventory.RDMAAffinity{Device: 0, Link: inventory.LinkPIX},
		inventory.RDMAAffinity{Device: 1, Link: inventory.LinkSys}))
	require.NoError(t, err)
	require.Equal(t, inventory.LinkPIX, near.Devices[0].RDMALink)
	require.Equal(t, inventory.LinkSys, near.Devices[1].RDMALink)
	far, shapeFar, err := modelNode(node(inventory.RDMAAffinity{Device: 0, Link: inventory.LinkSys},
		inventory.RDMAAffinity{Device: 1, Link: inventory.LinkPIX}))
	require.NoError(t, err)
	require.Equal(t, inventory.LinkSys, far.Devices[0].RDMALink)
	require.NotEqual(t, shapeNear, shapeFar)
}

// TestRDMATaskGetsTheDevicesNearTheAdapter: with the live profile, a 2-GPU
// task that asks for RDMA lands on the two GPUs under the adapter's PCIe
// switch (6 and 7 of an 8-GPU node whose NUMA nodes are {0..3}, {4..7}, PIX
// pairs 0–1 and 6–7); the same task without RDMA keeps the packing order.
func TestRDMATaskGetsTheDevicesNearTheAdapter(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		rdma bool
		want []int
	}{{true, []int{6, 7}}, {false, []int{0, 1}}} {
		h := newHarness(t, Config{})
		a := h.addNode("ib", inventory.VendorNVIDIA, "NVIDIA H100 80GB HBM3", 8, 81559)
		var aff []inventory.RDMAAffinity
		for i := range a.inv[0].Devices {
			d := &a.inv[0].Devices[i]
			d.NUMANode = ptrTo(i / 4)
			link := inventory.LinkSys
			switch {
			case i >= 6:
				link = inventory.LinkPIX
			case i >= 4:
				link = inventory.LinkNode
			}
			aff = append(aff, inventory.RDMAAffinity{Device: i, Link: link})
		}
		pix := func(peer int) []inventory.Link { return []inventory.Link{{Peer: peer, Type: inventory.LinkPIX}} }
		a.inv[0].Devices[0].Links, a.inv[0].Devices[1].Links = pix(1), pix(0)
		a.inv[0].Devices[6].Links, a.inv[0].Devices[7].Links = pix(7), pix(6)
		a.inv[0].RDMA = []inventory.RDMADevice{{Name: "mlx5_0", Kind: inventory.RDMAInfiniBand,
			Ports: []inventory.RDMAPort{{Port: 1, State: "ACTIVE"}}, Affinity: aff}}
		a.heartbeat()

		task := h.submit(controlplane.TaskSpec{Name: "allreduce", DeviceCount: 2, ComputePercent: 100,
			QoS: controlplane.QoSGold, RDMA: tc.rdma, Labels: map[string]string{"duration": "100"}})
		h.step()
		require.Equal(t, "ib", h.task(task.ID).NodeID)
		allocs, err := h.db.ListAllocations(h.ctx, "ib")
		require.NoError(t, err)
		var got []int
		for _, al := range allocs {
			if al.TaskID == task.ID {
				got = append(got, al.DeviceIndex)
			}
		}
		slices.Sort(got)
		require.Equal(t, tc.want, got, "rdma=%v", tc.rdma)
	}
}

func ptrTo[T any](v T) *T { return &v }
