package storetest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// inventoryModels is node id → the model of each device a node list shows.
func inventoryModels(t *testing.T, s FullStore, f controlplane.NodeFilter) map[string][]string {
	t.Helper()
	ns, _, err := s.ListNodes(ctx(t), f)
	require.NoError(t, err)
	out := map[string][]string{}
	for _, n := range ns {
		out[n.ID] = []string{}
		for _, snap := range n.Inventory {
			for _, d := range snap.Devices {
				out[n.ID] = append(out[n.ID], snap.Vendor+"/"+d.Model)
			}
		}
	}
	return out
}

func oneDevice(vendor, model string) []inventory.Snapshot {
	return []inventory.Snapshot{{Vendor: vendor, Devices: []inventory.Device{{Index: 0, Model: model}}}}
}

// testNodeListInventories: a node list carries each node's current
// inventory, whether the store read it again or reused what it had decoded:
// after enrollment, after a heartbeat that reports new devices, after one
// that reports none (kept), on a later page, and for a node without one.
func testNodeListInventories(t *testing.T, open FullOpener) {
	s := open(t)
	a := mkNode(t, s, func(n *controlplane.Node) { n.ID, n.Inventory = "inv-a", oneDevice("nvidia", "H100") })
	b := mkNode(t, s, func(n *controlplane.Node) { n.ID, n.Inventory = "inv-b", oneDevice("ascend", "910B") })
	c := mkNode(t, s, func(n *controlplane.Node) { n.ID, n.Inventory = "inv-c", nil })
	want := map[string][]string{a.ID: {"nvidia/H100"}, b.ID: {"ascend/910B"}, c.ID: {}}
	require.Equal(t, want, inventoryModels(t, s, controlplane.NodeFilter{}))
	require.Equal(t, want, inventoryModels(t, s, controlplane.NodeFilter{}), "listed again")

	_, err := s.RecordHeartbeat(ctx(t), a.ID, controlplane.NodeHeartbeat{Inventory: oneDevice("nvidia", "H200")})
	require.NoError(t, err)
	want[a.ID] = []string{"nvidia/H200"}
	require.Equal(t, want, inventoryModels(t, s, controlplane.NodeFilter{}))
	_, err = s.RecordHeartbeat(ctx(t), a.ID, controlplane.NodeHeartbeat{})
	require.NoError(t, err)
	require.Equal(t, want, inventoryModels(t, s, controlplane.NodeFilter{}), "a heartbeat without inventory keeps it")

	page := inventoryModels(t, s, controlplane.NodeFilter{Page: controlplane.Page{Limit: 1, Offset: 1}})
	require.Equal(t, map[string][]string{b.ID: {"ascend/910B"}}, page)
	got, err := s.GetNode(ctx(t), a.ID)
	require.NoError(t, err)
	require.Equal(t, "H200", got.Inventory[0].Devices[0].Model)
}

// RunNodeInventoryAcrossHandles: two handles on one database, as two
// servers: a list through one shows the inventory the other wrote, also
// when the new inventory is one the first handle had seen before.
func RunNodeInventoryAcrossHandles(t *testing.T, open func(t *testing.T) (a, b FullStore)) {
	a, b := open(t)
	n := mkNode(t, a, func(n *controlplane.Node) { n.Inventory = oneDevice("nvidia", "H100") })
	require.Equal(t, []string{"nvidia/H100"}, inventoryModels(t, a, controlplane.NodeFilter{})[n.ID])
	for _, model := range []string{"H200", "H100", "B200"} {
		_, err := b.RecordHeartbeat(ctx(t), n.ID, controlplane.NodeHeartbeat{Inventory: oneDevice("nvidia", model)})
		require.NoError(t, err)
		require.Equal(t, []string{"nvidia/" + model}, inventoryModels(t, a, controlplane.NodeFilter{})[n.ID],
			"the other handle's list after the inventory became %s", model)
	}
}
