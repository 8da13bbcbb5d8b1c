package scheduling

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// labelledNode enrolls a node with count nvidia devices and labels.
func (h *harness) labelledNode(id string, count int, labels map[string]string) {
	h.t.Helper()
	tok := &controlplane.BootstrapToken{Prefix: id, TokenHash: "hash-" + id, ExpiresAt: h.clk.Now().Add(time.Hour)}
	require.NoError(h.t, h.db.CreateBootstrapToken(h.ctx, tok))
	snap := inventory.Snapshot{Vendor: "nvidia"}
	for i := 0; i < count; i++ {
		m := int64(81920)
		snap.Devices = append(snap.Devices, inventory.Device{Index: i, Model: "A100", MemoryTotalMiB: &m})
	}
	n := &controlplane.Node{ID: id, Hostname: id + ".lab", State: controlplane.NodeOnline, CPUCount: 64, MemoryTotalMiB: 512000,
		Labels: labels, Inventory: []inventory.Snapshot{snap}}
	require.NoError(h.t, h.db.EnrollNode(h.ctx, tok.TokenHash, n))
	a := &fakeAgent{h: h, id: id, inv: []inventory.Snapshot{snap}, runs: map[int64]*run{}}
	a.heartbeat()
	h.nodes[id] = a
	h.order = append(h.order, id)
}

// TestTenantNodePools: a tenant's node selector dedicates the matching
// nodes to it: its tasks run only there, other tenants' and tenant-less
// tasks never do, even while the pool has free devices; ending the pool
// opens its nodes to everyone.
func TestTenantNodePools(t *testing.T) {
	h := newHarness(t, Config{})
	ts := h.db.(controlplane.TenantStore)
	require.NoError(t, ts.CreateTenant(h.ctx, &controlplane.Tenant{Name: "acme", NodeSelector: map[string]string{"pool": "acme"}}))
	require.NoError(t, ts.CreateTenant(h.ctx, &controlplane.Tenant{Name: "globex"}))
	h.labelledNode("n-acme", 3, map[string]string{"pool": "acme"})
	h.labelledNode("n-shared", 2, nil)

	submit := func(tenant string) *controlplane.Task {
		return h.submit(controlplane.TaskSpec{Name: "t-" + tenant, Tenant: tenant, DeviceCount: 1, ComputePercent: 100,
			QoS: "gold", Labels: map[string]string{"duration": "1000"}})
	}
	steps := func() {
		for range 3 {
			h.step()
		}
	}
	whyOf := func(task *controlplane.Task) string {
		got := h.task(task.ID)
		require.Equal(t, controlplane.TaskQueued, got.State)
		why, err := h.svc.Why(h.ctx, got)
		require.NoError(t, err)
		return string(why.LastAttempt)
	}

	acme1, acme2 := submit("acme"), submit("acme")
	globex1, globex2 := submit("globex"), submit("globex")
	steps()
	globex3, none := submit("globex"), submit("")
	steps()
	require.Equal(t, "n-acme", h.task(acme1.ID).NodeID)
	require.Equal(t, "n-acme", h.task(acme2.ID).NodeID)
	require.Equal(t, "n-shared", h.task(globex1.ID).NodeID)
	require.Equal(t, "n-shared", h.task(globex2.ID).NodeID)
	// n-acme has a free device, but it is acme's.
	require.Contains(t, whyOf(globex3), "node dedicated to another tenant")
	require.Contains(t, whyOf(none), "node dedicated to another tenant")

	acme3 := submit("acme")
	steps()
	require.Equal(t, "n-acme", h.task(acme3.ID).NodeID)
	acme4 := submit("acme")
	steps()
	require.Contains(t, whyOf(acme4), "node outside the tenant's dedicated pool", "acme never spills onto shared nodes")

	// Ending the pool: a finished acme task frees a device any tenant may take.
	empty := map[string]string{}
	_, err := ts.UpdateTenant(h.ctx, "acme", controlplane.TenantUpdate{NodeSelector: &empty})
	require.NoError(t, err)
	h.nodes["n-acme"].runs[acme1.ID].left = 1
	steps()
	// The oldest waiting task (globex3, queued before none and acme4) takes it.
	require.Equal(t, "n-acme", h.task(globex3.ID).NodeID, "without the pool its nodes are open to other tenants")
	require.Empty(t, h.task(acme4.ID).NodeID)
}
