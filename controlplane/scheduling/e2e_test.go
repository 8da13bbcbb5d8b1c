package scheduling

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// TestEndToEnd runs a heterogeneous cluster (NVIDIA A100 with MIG, Ascend
// 910B with vNPU, AMD MI210 sharing-only) with test-double agents through
// a mix of exclusive, shared, Gold/Silver/Bronze, gang and high-priority
// tasks under a quota, until every task ends: nothing lost, quotas held at
// every step, a preemption recorded with its reason and the victim's retry
// budget intact, gangs started all at once, and the ledger empty and the
// cluster balanced at the end.
func TestEndToEnd(t *testing.T) {
	h := newHarness(t, Config{})
	h.addNode("nv-1", inventory.VendorNVIDIA, "A100-SXM4-40GB", 2, 40960)
	h.addNode("npu-1", inventory.VendorAscend, "910B3", 2, 65536)
	h.addNode("amd-1", inventory.VendorAMD, "MI210", 2, 65536)
	ctx := h.ctx
	require.NoError(t, h.db.CreateQuota(ctx, &controlplane.Quota{Tenant: "team-a", Devices: 2, Policy: controlplane.QuotaQueue}))
	require.NoError(t, h.db.CreateQuota(ctx, &controlplane.Quota{Tenant: "team-b", Devices: 1, Policy: controlplane.QuotaRefuse}))

	long := map[string]string{"duration": "8"}
	var all []*controlplane.Task
	sub := func(s controlplane.TaskSpec) *controlplane.Task { tk := h.submit(s); all = append(all, tk); return tk }
	// Exclusive Gold: two whole NVIDIA devices.
	gold := sub(controlplane.TaskSpec{Name: "gold-2", DeviceCount: 2, ComputePercent: 100, Vendor: inventory.VendorNVIDIA, QoS: controlplane.QoSGold, Priority: 50})
	// Four Bronze 25% shares (AMD shares only), long enough to be preempted.
	var bronze []*controlplane.Task
	for i := 0; i < 4; i++ {
		bronze = append(bronze, sub(controlplane.TaskSpec{Name: "bronze", DeviceCount: 1, ComputePercent: 25, MemoryMiB: 4096,
			Vendor: inventory.VendorAMD, QoS: controlplane.QoSBronze, Priority: 1, MaxRetries: 1, Labels: long}))
	}
	// Silver with driver limits (AMD), team-a within its quota of 2 devices:
	// three tasks of one device each → the third waits for quota.
	var quotaTasks []*controlplane.Task
	for i := 0; i < 3; i++ {
		quotaTasks = append(quotaTasks, sub(controlplane.TaskSpec{Name: "team-a", DeviceCount: 1, ComputePercent: 20, MemoryMiB: 2048,
			QoS: controlplane.QoSSilver, Vendor: inventory.VendorAMD, Tenant: "team-a", Priority: 5}))
	}
	// team-b refuses over quota at admission.
	refused := sub(controlplane.TaskSpec{Name: "team-b-big", DeviceCount: 2, ComputePercent: 50, QoS: controlplane.QoSBronze, Tenant: "team-b"})
	// A gang of two Ascend Gold partitions.
	var gang []*controlplane.Task
	for i := 0; i < 2; i++ {
		gang = append(gang, sub(controlplane.TaskSpec{Name: "gang", DeviceCount: 1, MemoryMiB: 16384, ComputePercent: 30,
			Vendor: inventory.VendorAscend, QoS: controlplane.QoSGold, Gang: "allreduce", GangSize: 2, Priority: 10}))
	}

	// Let the first wave run, then a high-priority Gold task wants a whole
	// AMD device: both are shared by Bronze, so it must preempt.
	for i := 0; i < 3; i++ {
		h.step()
	}
	hp := sub(controlplane.TaskSpec{Name: "urgent", DeviceCount: 1, ComputePercent: 100, Vendor: inventory.VendorAMD,
		QoS: controlplane.QoSGold, Priority: 900})

	for i := 0; i < 120 && !allEnded(h, all); i++ {
		h.step()
		checkQuota(t, h, "team-a", 2)
		checkGang(t, h, gang)
		require.NoError(t, h.svc.snap.cl.CheckInvariants())
	}
	require.True(t, allEnded(h, all), "every task ends: nothing lost")

	for _, tk := range all {
		got := h.task(tk.ID)
		if tk.ID == refused.ID {
			require.Equal(t, controlplane.TaskFailed, got.State)
			require.Contains(t, got.Reason, "quota tenant team-b")
			continue
		}
		require.Equal(t, controlplane.TaskSucceeded, got.State, "task %d %s: %s", tk.ID, tk.Spec.Name, got.Reason)
	}
	require.Equal(t, controlplane.TaskSucceeded, h.task(gold.ID).State)
	require.Equal(t, controlplane.TaskSucceeded, h.task(hp.ID).State)

	// A preemption happened, with its reason, and the victim kept its budget.
	preempted := 0
	for _, b := range bronze {
		evs, err := h.db.ListTaskEvents(ctx, b.ID)
		require.NoError(t, err)
		for _, ev := range evs {
			if strings.HasPrefix(ev.Reason, "preempted by task") {
				preempted++
				require.Contains(t, ev.Reason, "priority 900")
				require.Equal(t, 0, h.task(b.ID).Attempt, "retry budget intact")
			}
		}
	}
	require.Positive(t, preempted)
	// Smallest victim set: the urgent task needs one whole AMD device, so it
	// displaces at most one device's worth of shares (4 × 25%), never work
	// on further devices while its first victims are still stopping.
	victims := 0
	for _, tk := range all {
		evs, err := h.db.ListTaskEvents(ctx, tk.ID)
		require.NoError(t, err)
		for _, ev := range evs {
			if strings.Contains(ev.Reason, fmt.Sprintf("preempted by task %d ", hp.ID)) {
				victims++
			}
		}
	}
	require.LessOrEqual(t, victims, 4, "victims of the urgent task")

	// Ledger balanced: one more tick releases the last ends; then no rows
	// are left and nothing is allocated in the cluster.
	h.step()
	rows, err := h.db.ListAllocations(ctx, "")
	require.NoError(t, err)
	require.Empty(t, rows)
	require.Zero(t, h.svc.snap.cl.Allocated())
	require.Empty(t, h.svc.snap.placed)
}

func allEnded(h *harness, ts []*controlplane.Task) bool {
	for _, tk := range ts {
		if !h.task(tk.ID).State.Terminal() {
			return false
		}
	}
	return true
}

// checkQuota: the ledger never holds more devices for tenant than limit.
func checkQuota(t *testing.T, h *harness, tenant string, limit int) {
	rows, err := h.db.ListAllocations(h.ctx, "")
	require.NoError(t, err)
	n := 0
	for _, r := range rows {
		if r.Tenant == tenant && r.DevicePos >= 0 {
			n++
		}
	}
	require.LessOrEqual(t, n, limit, "quota of %s", tenant)
}

// checkGang: gang members are placed all at once or not at all.
func checkGang(t *testing.T, h *harness, gang []*controlplane.Task) {
	placed := 0
	for _, g := range gang {
		if h.task(g.ID).State != controlplane.TaskQueued {
			placed++
		}
	}
	require.True(t, placed == 0 || placed == len(gang), "gang partly placed: %d of %d", placed, len(gang))
}
