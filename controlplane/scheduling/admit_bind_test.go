package scheduling

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// transitionCounter counts bind transactions and the admissions written on
// their own (submitted → queued).
type transitionCounter struct {
	Store
	mu              sync.Mutex
	binds, admitted int
}

func (c *transitionCounter) countAdmissions(trs ...controlplane.Transition) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, tr := range trs {
		if tr.From == controlplane.TaskSubmitted && tr.To == controlplane.TaskQueued {
			c.admitted++
		}
	}
}

func (c *transitionCounter) TransitionTask(ctx context.Context, tr controlplane.Transition) (*controlplane.Task, error) {
	c.countAdmissions(tr)
	return c.Store.TransitionTask(ctx, tr)
}

func (c *transitionCounter) TransitionTasks(ctx context.Context, trs []controlplane.Transition) ([]*controlplane.Task, error) {
	c.countAdmissions(trs...)
	return c.Store.TransitionTasks(ctx, trs)
}

func (c *transitionCounter) BindTasks(ctx context.Context, bs []controlplane.Binding) ([]*controlplane.Task, error) {
	c.mu.Lock()
	c.binds++
	c.mu.Unlock()
	return c.Store.BindTasks(ctx, bs)
}

// TestAdmitAndPlaceInOneWrite: a task admitted and placed by the same tick
// is written once (submitted → scheduled through queued), its history
// still showing the admission; a task that does not fit now, and a gang
// member, are stored queued when the tick ends, as before.
func TestAdmitAndPlaceInOneWrite(t *testing.T) {
	h := newHarness(t, Config{})
	cs := &transitionCounter{Store: h.db}
	svc := h.serviceOn(cs)
	h.svc = svc
	h.addNode("n1", inventory.VendorNVIDIA, "NVIDIA H100 80GB HBM3", 8, 81559)
	require.NoError(t, h.svc.Tick(h.ctx, true))

	var fits []int64
	for range 3 {
		fits = append(fits, h.submit(controlplane.TaskSpec{Name: "fits", DeviceCount: 2, ComputePercent: 100, QoS: controlplane.QoSBronze}).ID)
	}
	tooBig := h.submit(controlplane.TaskSpec{Name: "waits", DeviceCount: 4, ComputePercent: 100, QoS: controlplane.QoSBronze}).ID
	member := h.submit(controlplane.TaskSpec{Name: "gang", DeviceCount: 1, ComputePercent: 100, QoS: controlplane.QoSBronze,
		Gang: "g", GangSize: 4}).ID
	require.NoError(t, h.svc.Tick(h.ctx, false))

	for _, id := range fits {
		require.Equal(t, controlplane.TaskScheduled, h.task(id).State)
		ev, err := h.db.ListTaskEvents(h.ctx, id)
		require.NoError(t, err)
		require.Len(t, ev, 3)
		require.Equal(t, [3]controlplane.TaskState{controlplane.TaskSubmitted, controlplane.TaskQueued, controlplane.TaskScheduled},
			[3]controlplane.TaskState{ev[0].To, ev[1].To, ev[2].To})
		require.Equal(t, "admitted", ev[1].Reason)
		require.Equal(t, "scheduler", ev[1].Actor)
	}
	require.Equal(t, 1, cs.binds, "the three placements bind in one transaction")
	require.Equal(t, 2, cs.admitted, "only the task left waiting and the gang member are admitted on their own")
	for _, id := range []int64{tooBig, member} {
		require.Equal(t, controlplane.TaskQueued, h.task(id).State, "task %d", id)
	}
	require.Empty(t, h.svc.held.trs, "nothing held after the tick")

	// The next tick finds the waiting task queued in the store and places
	// it once room is freed; nothing is admitted twice.
	before := cs.admitted
	require.NoError(t, h.svc.Tick(h.ctx, false))
	require.Equal(t, before, cs.admitted)
	require.Equal(t, controlplane.TaskQueued, h.task(tooBig).State)
}
