package scheduling

import (
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
