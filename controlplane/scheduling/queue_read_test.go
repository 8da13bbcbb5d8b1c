package scheduling

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// TestQueueReadSeesStoreChanges: the queues the loop reads every tick keep
// each task's decoded spec between reads, but a change made in the store
// between two ticks is what the next tick acts on: a waiting task
// cancelled meanwhile is not placed when room appears, and a task ended
// and retried is placed again under its new attempt.
func TestQueueReadSeesStoreChanges(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{})
	h.addNode("n1", inventory.VendorNVIDIA, "NVIDIA H100 80GB HBM3", 1, 81559)
	whole := func(name string, retries int) *controlplane.Task {
		return h.submit(controlplane.TaskSpec{Name: name, DeviceCount: 1, MemoryMiB: 80000, ComputePercent: 100,
			QoS: controlplane.QoSGold, MaxRetries: retries, Labels: map[string]string{"duration": "1000"}})
	}
	first := whole("first", 1)
	h.step()
	waiting := whole("waiting", 0)
	h.step() // admitted and read by the loop, no room while first holds the device
	require.Equal(t, controlplane.TaskRunning, h.task(first.ID).State)
	require.Equal(t, controlplane.TaskQueued, h.task(waiting.ID).State)

	cycles := func() float64 {
		return testutil.ToFloat64(h.svc.m.attempts.WithLabelValues("placed")) +
			testutil.ToFloat64(h.svc.m.attempts.WithLabelValues("unschedulable"))
	}
	before := cycles()
	_, err := h.db.TransitionTask(h.ctx, controlplane.Transition{TaskID: waiting.ID, From: controlplane.TaskQueued,
		To: controlplane.TaskCancelled, Reason: "cancelled by its owner", Actor: "test"})
	require.NoError(t, err)
	// first ends failed with a retry left (its agent reports the exit):
	// the loop requeues it as attempt 1 and places it again.
	a := h.nodes["n1"]
	delete(a.runs, first.ID)
	a.status(first.ID, controlplane.TaskFailed, "exit 1", 0)
	for range 8 {
		h.step()
	}

	require.Equal(t, controlplane.TaskCancelled, h.task(waiting.ID).State, "cancelled while waiting: never placed")
	rows, err := h.db.ListAllocations(h.ctx, "")
	require.NoError(t, err)
	for _, a := range rows {
		require.NotEqual(t, waiting.ID, a.TaskID, "no ledger row for the cancelled task")
	}
	again := h.task(first.ID)
	require.Equal(t, 1, again.Attempt)
	require.Contains(t, []controlplane.TaskState{controlplane.TaskScheduled, controlplane.TaskRunning}, again.State)
	var placedAgain bool
	for _, a := range rows {
		if a.TaskID == first.ID {
			require.Equal(t, 1, a.Attempt, "the ledger holds the new attempt's placement")
			placedAgain = true
		}
	}
	require.True(t, placedAgain)
	require.Equal(t, before+1, cycles(), "one scheduling cycle (first's new attempt); none for the cancelled task")
}
