package storetest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
)

// testBindTasksBatch: a batch as large as the scheduler writes binds every
// placement with its attempt, ledger rows and assignment; a duplicate
// device slot or a stale task anywhere in the batch leaves nothing behind.
func testBindTasksBatch(t *testing.T, open FullOpener) {
	s := open(t)
	n := mkNode(t, s, nil)
	var bs []controlplane.Binding
	var tasks []*controlplane.Task
	for i := range 300 {
		task := queuedTask(t, s, nil)
		tasks = append(tasks, task)
		bs = append(bs, binding(task, n.ID, 1+i%2))
	}
	got, err := s.BindTasks(ctx(t), bs)
	require.NoError(t, err)
	require.Len(t, got, 300)
	for i, task := range got {
		require.Equal(t, tasks[i].ID, task.ID, "answers in the order of the bindings")
		require.Equal(t, controlplane.TaskScheduled, task.State)
		require.NotZero(t, bs[i].Assignment.ID)
		require.Equal(t, task.Attempt, bs[i].Assignment.Attempt)
		for _, a := range bs[i].Allocations {
			require.NotZero(t, a.ID)
			require.Equal(t, task.ID, a.TaskID)
			require.Equal(t, task.Attempt, a.Attempt)
		}
	}
	ledger, err := s.ListAllocations(ctx(t), n.ID)
	require.NoError(t, err)
	require.Len(t, ledger, 450)
	open1, err := s.OpenAssignments(ctx(t), n.ID)
	require.NoError(t, err)
	require.Len(t, open1, 300)
	ev, err := s.ListTaskEvents(ctx(t), tasks[299].ID)
	require.NoError(t, err)
	require.Equal(t, controlplane.TaskScheduled, ev[len(ev)-1].To)

	// A duplicate slot in the last binding of a batch: nothing written.
	a, b := queuedTask(t, s, nil), queuedTask(t, s, nil)
	bb := binding(b, n.ID, 1)
	bb.Allocations = append(bb.Allocations, bb.Allocations[0])
	_, err = s.BindTasks(ctx(t), []controlplane.Binding{binding(a, n.ID, 1), bb})
	require.ErrorIs(t, err, controlplane.ErrConflict)
	for _, id := range []int64{a.ID, b.ID} {
		still, err := s.GetTask(ctx(t), id)
		require.NoError(t, err)
		require.Equal(t, controlplane.TaskQueued, still.State)
	}
	ledger, err = s.ListAllocations(ctx(t), n.ID)
	require.NoError(t, err)
	require.Len(t, ledger, 450)

	// A task that does not exist, in the middle: ErrNotFound, nothing written.
	c := queuedTask(t, s, nil)
	ghost := binding(&controlplane.Task{ID: 1 << 40}, n.ID, 1)
	_, err = s.BindTasks(ctx(t), []controlplane.Binding{binding(a, n.ID, 1), ghost, binding(c, n.ID, 1)})
	require.ErrorIs(t, err, controlplane.ErrNotFound)
	still, err := s.GetTask(ctx(t), a.ID)
	require.NoError(t, err)
	require.Equal(t, controlplane.TaskQueued, still.State)
}

// testTransitionTasks: the scheduler's admissions of a tick in one
// transaction, all or nothing.
func testTransitionTasks(t *testing.T, open FullOpener) {
	s := open(t)
	admit := func(task *controlplane.Task) controlplane.Transition {
		return controlplane.Transition{TaskID: task.ID, From: controlplane.TaskSubmitted, To: controlplane.TaskQueued,
			Reason: "admitted", Actor: "scheduler"}
	}
	got, err := s.TransitionTasks(ctx(t), nil)
	require.NoError(t, err)
	require.Empty(t, got)
	var trs []controlplane.Transition
	for range 300 {
		trs = append(trs, admit(mkTask(t, s, 0, nil)))
	}
	got, err = s.TransitionTasks(ctx(t), trs)
	require.NoError(t, err)
	require.Len(t, got, 300)
	for i, task := range got {
		require.Equal(t, trs[i].TaskID, task.ID)
		require.Equal(t, controlplane.TaskQueued, task.State)
		require.Equal(t, "admitted", task.Reason)
	}
	ev, err := s.ListTaskEvents(ctx(t), got[0].ID)
	require.NoError(t, err)
	require.Equal(t, controlplane.TaskQueued, ev[len(ev)-1].To)
	require.Equal(t, "scheduler", ev[len(ev)-1].Actor)

	// One task already admitted (a second server's tick): nothing written.
	fresh, again := mkTask(t, s, 0, nil), got[5]
	_, err = s.TransitionTasks(ctx(t), []controlplane.Transition{admit(fresh), admit(again)})
	require.ErrorIs(t, err, controlplane.ErrConflict)
	still, err := s.GetTask(ctx(t), fresh.ID)
	require.NoError(t, err)
	require.Equal(t, controlplane.TaskSubmitted, still.State)
	_, err = s.TransitionTasks(ctx(t), []controlplane.Transition{admit(fresh), {TaskID: fresh.ID,
		From: controlplane.TaskSubmitted, To: controlplane.TaskSucceeded}})
	require.Error(t, err, "a move outside the transition table is refused up front")
}
