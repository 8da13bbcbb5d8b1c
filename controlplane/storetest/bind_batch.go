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

// testAdmitAndBind: a task admitted and placed in one scheduler tick moves
// submitted → scheduled in one write (Via queued), its history showing the
// admission, then the placement; batched or alone, on BindTasks and on
// TransitionTask; a task that left submitted meanwhile fails the guard and
// nothing of the batch is written.
func testAdmitAndBind(t *testing.T, open FullOpener) {
	s := open(t)
	n := mkNode(t, s, nil)
	throughAdmission := func(task *controlplane.Task, slices int) controlplane.Binding {
		b := binding(task, n.ID, slices)
		b.Transition.From, b.Transition.Via, b.Transition.ViaReason = controlplane.TaskSubmitted, controlplane.TaskQueued, "admitted"
		return b
	}
	fresh, queued := mkTask(t, s, 0, nil), queuedTask(t, s, nil)
	got, err := s.BindTasks(ctx(t), []controlplane.Binding{throughAdmission(fresh, 2), binding(queued, n.ID, 1)})
	require.NoError(t, err)
	require.Len(t, got, 2)
	require.Equal(t, controlplane.TaskScheduled, got[0].State)
	require.Equal(t, n.ID, got[0].NodeID)
	ev, err := s.ListTaskEvents(ctx(t), fresh.ID)
	require.NoError(t, err)
	var steps []string
	for _, e := range ev {
		steps = append(steps, string(e.From)+"→"+string(e.To)+":"+e.Reason)
	}
	require.Equal(t, []string{"→submitted:" + ev[0].Reason, "submitted→queued:admitted", "queued→scheduled:" + ev[len(ev)-1].Reason}, steps)
	require.Equal(t, "scheduler", ev[1].Actor)

	alone := mkTask(t, s, 0, nil)
	got, err = s.BindTasks(ctx(t), []controlplane.Binding{throughAdmission(alone, 1)})
	require.NoError(t, err)
	require.Equal(t, controlplane.TaskScheduled, got[0].State)
	ev, err = s.ListTaskEvents(ctx(t), alone.ID)
	require.NoError(t, err)
	require.Len(t, ev, 3)
	require.Equal(t, controlplane.TaskQueued, ev[1].To)

	// A task cancelled before the bind: the batch is refused, nothing written.
	a, gone := mkTask(t, s, 0, nil), mkTask(t, s, 0, nil)
	_, err = s.TransitionTask(ctx(t), controlplane.Transition{TaskID: gone.ID, From: controlplane.TaskSubmitted,
		To: controlplane.TaskCancelled, Actor: "user"})
	require.NoError(t, err)
	_, err = s.BindTasks(ctx(t), []controlplane.Binding{throughAdmission(a, 1), throughAdmission(gone, 1)})
	require.ErrorIs(t, err, controlplane.ErrConflict)
	still, err := s.GetTask(ctx(t), a.ID)
	require.NoError(t, err)
	require.Equal(t, controlplane.TaskSubmitted, still.State)
	ev, err = s.ListTaskEvents(ctx(t), a.ID)
	require.NoError(t, err)
	require.Len(t, ev, 1, "no admission event of the refused batch")

	// Through admission to failed, alone.
	failed, err := s.TransitionTask(ctx(t), controlplane.Transition{TaskID: a.ID, From: controlplane.TaskSubmitted,
		Via: controlplane.TaskQueued, ViaReason: "admitted", To: controlplane.TaskFailed, Reason: "never fits", Actor: "scheduler"})
	require.NoError(t, err)
	require.Equal(t, controlplane.TaskFailed, failed.State)
	ev, err = s.ListTaskEvents(ctx(t), a.ID)
	require.NoError(t, err)
	require.Len(t, ev, 3)
	require.Equal(t, "never fits", ev[2].Reason)

	// Steps outside the transition table are refused up front.
	b := mkTask(t, s, 0, nil)
	for _, tr := range []controlplane.Transition{
		{TaskID: b.ID, From: controlplane.TaskSubmitted, Via: controlplane.TaskRunning, To: controlplane.TaskSucceeded},
		{TaskID: b.ID, From: controlplane.TaskSubmitted, Via: controlplane.TaskQueued, To: controlplane.TaskRunning},
		{TaskID: b.ID, From: controlplane.TaskSubmitted, Via: "limbo", To: controlplane.TaskScheduled},
		{TaskID: b.ID, From: controlplane.TaskFailed, Via: controlplane.TaskQueued, To: controlplane.TaskScheduled, Retry: true},
	} {
		_, err := s.TransitionTask(ctx(t), tr)
		require.Error(t, err, "%s → %s → %s", tr.From, tr.Via, tr.To)
	}
	still, err = s.GetTask(ctx(t), b.ID)
	require.NoError(t, err)
	require.Equal(t, controlplane.TaskSubmitted, still.State)
}
