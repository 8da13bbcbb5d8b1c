package runner

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/agent/protocol"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

func TestRDMAEnv(t *testing.T) {
	t.Parallel()
	nic := func(name, state, netdev string, aff ...inventory.RDMAAffinity) inventory.RDMADevice {
		return inventory.RDMADevice{Name: name, Ports: []inventory.RDMAPort{{Port: 1, State: state, NetDev: netdev}}, Affinity: aff}
	}
	near := func(d int, l inventory.LinkType) inventory.RDMAAffinity {
		return inventory.RDMAAffinity{Device: d, Link: l}
	}
	nics := []inventory.RDMADevice{
		nic("mlx5_0", "ACTIVE", "ib0", near(0, inventory.LinkPIX), near(4, inventory.LinkSys)),
		nic("mlx5_1", "ACTIVE", "ib1", near(4, inventory.LinkPIX), near(0, inventory.LinkSys)),
		nic("mlx5_2", "DOWN", "ib2", near(4, inventory.LinkPIX)),
	}
	rdma := map[string][]inventory.RDMADevice{"nvidia": nics, "ascend": nics}
	env := RDMAEnv([]protocol.DeviceSlice{{Vendor: "nvidia", Index: 4}}, rdma)
	require.Equal(t, map[string]string{"NCCL_IB_HCA": "mlx5_1,mlx5_0"}, env, "closest active adapter first, down ones never")
	env = RDMAEnv([]protocol.DeviceSlice{{Vendor: "nvidia", Index: 0}}, rdma)
	require.Equal(t, "mlx5_0,mlx5_1", env["NCCL_IB_HCA"])
	env = RDMAEnv([]protocol.DeviceSlice{{Vendor: "ascend", Index: 4}}, rdma)
	require.Equal(t, map[string]string{"HCCL_SOCKET_IFNAME": "ib1"}, env)
	require.Empty(t, RDMAEnv([]protocol.DeviceSlice{{Vendor: "nvidia", Index: 0}}, nil), "no adapters: nothing")
	require.Empty(t, RDMAEnv([]protocol.DeviceSlice{{Vendor: "mthreads", Index: 0}}, map[string][]inventory.RDMADevice{"mthreads": nics}),
		"a vendor without a known collective variable gets none")
}
