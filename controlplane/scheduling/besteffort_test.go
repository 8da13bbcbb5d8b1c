package scheduling

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/agent/protocol"
	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// TestSilverBestEffortPlacement: Silver goes to a GPU whose node enforces
// it first; where only a GPU that enforces nothing has room, a task that
// does not allow best effort waits, one that does runs there best-effort —
// its slice says so to the agent and its placement event says so.
func TestSilverBestEffortPlacement(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{})
	withIsolation := func(a *fakeAgent, iso inventory.Isolation) {
		for i := range a.inv[0].Devices {
			a.inv[0].Devices[i].Isolation = iso
		}
		a.heartbeat()
	}
	withIsolation(h.addNode("enforced", inventory.VendorNVIDIA, "NVIDIA A10", 1, 16384),
		inventory.Isolation{DriverLimits: "hami-core", Sharing: true})
	withIsolation(h.addNode("plain", inventory.VendorNVIDIA, "NVIDIA H100 80GB HBM3", 1, 81559),
		inventory.Isolation{Sharing: true})

	silver := func(name string, mem int, allow bool) *controlplane.Task {
		return h.submit(controlplane.TaskSpec{Name: name, DeviceCount: 1, MemoryMiB: mem, ComputePercent: 20,
			QoS: controlplane.QoSSilver, AllowBestEffort: allow, Labels: map[string]string{"duration": "100"}})
	}
	first := silver("first", 8192, true)
	h.step()
	require.Equal(t, "enforced", h.task(first.ID).NodeID, "an enforcing GPU is preferred even when best effort is allowed")

	strict := silver("strict", 12000, false)
	loose := silver("loose", 12000, true)
	for range 3 {
		h.step()
	}
	require.Equal(t, controlplane.TaskQueued, h.task(strict.ID).State, "no enforcing GPU has room; best effort not allowed")
	lt := h.task(loose.ID)
	require.Equal(t, "plain", lt.NodeID)
	require.NotEqual(t, controlplane.TaskQueued, lt.State)

	evs, err := h.db.ListTaskEvents(h.ctx, loose.ID)
	require.NoError(t, err)
	var placed string
	for _, e := range evs {
		if e.To == controlplane.TaskScheduled {
			placed = e.Reason
		}
	}
	require.Contains(t, placed, "placed on plain")
	require.Contains(t, placed, "best-effort: no device that enforces Silver")

	allocs, err := h.db.ListAllocations(h.ctx, "plain")
	require.NoError(t, err)
	var found bool
	for _, a := range allocs {
		if a.TaskID == loose.ID {
			require.Equal(t, protocol.IsolationBestEffort, a.Isolation, "the slice the agent gets says best effort")
			found = true
		}
	}
	require.True(t, found, "the loose task holds the plain GPU")

	evs, err = h.db.ListTaskEvents(h.ctx, first.ID)
	require.NoError(t, err)
	for _, e := range evs {
		require.False(t, strings.Contains(e.Reason, "best-effort"), "the enforced placement is not best effort: %s", e.Reason)
	}
}
