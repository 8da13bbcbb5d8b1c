package scheduling

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/agent/runner"
	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// TestBronzePolicingRequeuesRestartable: the agent stops an over-share
// Bronze task as failed with the policing reason; the server requeues it
// when it has retries left (the retry event names the reason) and runs it
// again, and leaves one without retries failed with that reason.
func TestBronzePolicingRequeuesRestartable(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{})
	a := h.addNode("n1", inventory.VendorNVIDIA, "NVIDIA H100 80GB HBM3", 1, 81559)
	bronze := func(name string, retries int) *controlplane.Task {
		return h.submit(controlplane.TaskSpec{Name: name, DeviceCount: 1, MemoryMiB: 8000, ComputePercent: 20,
			QoS: controlplane.QoSBronze, MaxRetries: retries, Labels: map[string]string{"duration": "1000"}})
	}
	restartable, once := bronze("restartable", 1), bronze("once", 0)
	for range 3 {
		h.step()
	}
	for _, tk := range []*controlplane.Task{restartable, once} {
		require.Equal(t, controlplane.TaskRunning, h.task(tk.ID).State)
	}
	reason := runner.Eviction{TaskID: restartable.ID, Device: "GPU-a", UsedMiB: 12000, ShareMiB: 8000, FreeMiB: 1559}.Reason()
	for _, tk := range []*controlplane.Task{restartable, once} {
		delete(a.runs, tk.ID) // what the agent's policing does: it stops the run
		a.status(tk.ID, controlplane.TaskFailed, reason, 0)
	}
	for range 10 {
		h.step()
	}

	got := h.task(restartable.ID)
	require.Equal(t, 1, got.Attempt, "requeued once")
	require.Contains(t, []controlplane.TaskState{controlplane.TaskQueued, controlplane.TaskScheduled, controlplane.TaskRunning}, got.State)
	evs, err := h.db.ListTaskEvents(h.ctx, restartable.ID)
	require.NoError(t, err)
	var failed, retried bool
	for _, e := range evs {
		switch {
		case e.To == controlplane.TaskFailed:
			failed = e.Reason == reason
		case e.From == controlplane.TaskFailed && e.To == controlplane.TaskQueued:
			retried = strings.HasPrefix(e.Reason, "retry 1/1 after failed: bronze memory policing: used 12000 MiB on GPU-a")
		}
	}
	require.True(t, failed, "the stop is an event with the policing reason: %+v", evs)
	require.True(t, retried, "the requeue is an event naming why: %+v", evs)

	gone := h.task(once.ID)
	require.Equal(t, controlplane.TaskFailed, gone.State, "no retries: stays failed")
	require.Equal(t, reason, gone.Reason)
	require.Zero(t, gone.Attempt)
}
