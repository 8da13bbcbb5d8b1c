package storetest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
)

func testListTasksByState(t *testing.T, open FullOpener) {
	s := open(t)
	low := queuedTask(t, s, func(sp *controlplane.TaskSpec) { sp.Priority = 10 })
	high := queuedTask(t, s, func(sp *controlplane.TaskSpec) { sp.Priority = 900 })
	lowLater := queuedTask(t, s, func(sp *controlplane.TaskSpec) { sp.Priority = 10 })
	submitted := mkTask(t, s, 0, func(sp *controlplane.TaskSpec) { sp.Priority = 1000 })

	got, err := s.ListTasksByState(ctx(t), []controlplane.TaskState{controlplane.TaskQueued}, 0)
	require.NoError(t, err)
	requireIDs(t, []int64{high.ID, low.ID, lowLater.ID}, taskIDs(got))
	got, err = s.ListTasksByState(ctx(t), []controlplane.TaskState{controlplane.TaskQueued, controlplane.TaskSubmitted}, 2)
	require.NoError(t, err)
	requireIDs(t, []int64{submitted.ID, high.ID}, taskIDs(got))
	got, err = s.ListTasksByState(ctx(t), nil, 10)
	require.NoError(t, err)
	require.Empty(t, got)
}

// testListTasksByStateAfterChanges: the scheduler's queue read, repeated
// as two tasks move (submitted, queued and placed in batches, running,
// ended with a retry, queued again, cancelled), returns exactly what
// GetTask returns at each step, and so do the batched writes: nothing a
// transition changed is served from an earlier read, and the spec is the
// stored one.
func testListTasksByStateAfterChanges(t *testing.T, open FullOpener) {
	s := open(t)
	n := mkNode(t, s, nil)
	spec := func(sp *controlplane.TaskSpec) {
		sp.Command, sp.Args = []string{"python", "train.py"}, []string{"--epochs", "3"}
		sp.Env, sp.SecretEnv = map[string]string{"A": "1"}, map[string]string{"TOKEN": "s3cret"}
		sp.Labels, sp.Models = map[string]string{"team": "vision"}, []string{"H100"}
		sp.Priority, sp.MaxRetries, sp.Tenant, sp.Project = 7, 2, "t1", "p1"
	}
	task, other := mkTask(t, s, 0, spec), mkTask(t, s, 0, nil)
	live := []controlplane.TaskState{controlplane.TaskSubmitted, controlplane.TaskQueued,
		controlplane.TaskScheduled, controlplane.TaskRunning}
	requireAsStored := func(step string, tasks []*controlplane.Task, n int) {
		t.Helper()
		require.Len(t, tasks, n, step)
		for _, got := range tasks {
			want, err := s.GetTask(ctx(t), got.ID)
			require.NoError(t, err)
			require.Equal(t, want, got, step)
		}
	}
	requireListedAsStored := func(step string, n int) {
		t.Helper()
		got, err := s.ListTasksByState(ctx(t), live, 0)
		require.NoError(t, err, step)
		requireAsStored(step, got, n)
		// The same read again (served from what the first one kept).
		again, err := s.ListTasksByState(ctx(t), live, 0)
		require.NoError(t, err, step)
		requireAsStored(step+", read again", again, n)
	}
	requireListedAsStored("submitted", 2)
	queued, err := s.TransitionTasks(ctx(t), []controlplane.Transition{
		{TaskID: task.ID, From: controlplane.TaskSubmitted, To: controlplane.TaskQueued, Reason: "admitted", Actor: "scheduler"},
		{TaskID: other.ID, From: controlplane.TaskSubmitted, To: controlplane.TaskQueued, Reason: "admitted", Actor: "scheduler"}})
	require.NoError(t, err)
	requireAsStored("admitted (batch)", queued, 2)
	requireListedAsStored("queued", 2)
	bound, err := s.BindTasks(ctx(t), []controlplane.Binding{binding(task, n.ID, 1), binding(other, n.ID, 1)})
	require.NoError(t, err)
	requireAsStored("bound (batch)", bound, 2)
	requireListedAsStored("scheduled", 2)
	move(t, s, task.ID, controlplane.TaskRunning)
	requireListedAsStored("running", 2)
	code := 1
	_, err = s.TransitionTask(ctx(t), controlplane.Transition{TaskID: task.ID, From: controlplane.TaskRunning,
		To: controlplane.TaskFailed, ExitCode: &code, Reason: "exit 1", Actor: "agent"})
	require.NoError(t, err)
	_, err = s.TransitionTask(ctx(t), controlplane.Transition{TaskID: task.ID, From: controlplane.TaskFailed,
		To: controlplane.TaskQueued, Reason: "retry", Actor: "scheduler", Retry: true})
	require.NoError(t, err)
	requireListedAsStored("queued again, attempt 1", 2)
	move(t, s, task.ID, controlplane.TaskCancelled)
	move(t, s, other.ID, controlplane.TaskCancelled)
	got, err := s.ListTasksByState(ctx(t), live, 0)
	require.NoError(t, err)
	require.Empty(t, got, "cancelled tasks are not in the queues")
}

// binding places task on node's devices 0..n-1.
func binding(task *controlplane.Task, node string, devices int) controlplane.Binding {
	b := controlplane.Binding{
		Assignment: &controlplane.Assignment{NodeID: node, Kind: controlplane.AssignRun, TaskID: task.ID, Payload: []byte(`{}`)},
		Transition: controlplane.Transition{TaskID: task.ID, From: controlplane.TaskQueued, To: controlplane.TaskScheduled,
			NodeID: &node, Actor: "scheduler"},
	}
	for i := range devices {
		a := &controlplane.Allocation{NodeID: node, DevicePos: i, DeviceIndex: i, DeviceUUID: "GPU-" + node,
			Vendor: "nvidia", Model: "H100", MemoryMiB: 40960, ComputeMilli: 500, QoS: controlplane.QoSSilver,
			Isolation: "hami-core", PartStart: -1, Tenant: "t1", Project: "p1", Priority: 5}
		if i == 0 {
			a.CPUMilli, a.HostMemoryMiB = 4000, 8192
		}
		b.Allocations = append(b.Allocations, a)
	}
	return b
}

func testBindTasks(t *testing.T, open FullOpener) {
	s := open(t)
	n := mkNode(t, s, nil)
	t1, t2 := queuedTask(t, s, nil), queuedTask(t, s, nil)
	b1, b2 := binding(t1, n.ID, 2), binding(t2, n.ID, 1)
	got, err := s.BindTasks(ctx(t), []controlplane.Binding{b1, b2})
	require.NoError(t, err)
	require.Len(t, got, 2)
	for _, task := range got {
		require.Equal(t, controlplane.TaskScheduled, task.State)
		require.Equal(t, n.ID, task.NodeID)
	}
	require.NotZero(t, b1.Assignment.ID)
	require.NotZero(t, b1.Allocations[1].ID)

	ledger, err := s.ListAllocations(ctx(t), n.ID)
	require.NoError(t, err)
	require.Len(t, ledger, 3)
	first := ledger[0]
	require.Equal(t, t1.ID, first.TaskID)
	require.Equal(t, 0, first.DevicePos)
	require.Equal(t, int64(4000), first.CPUMilli)
	require.Equal(t, int64(8192), first.HostMemoryMiB)
	require.Equal(t, controlplane.QoSSilver, first.QoS)
	require.Equal(t, -1, first.PartStart)
	require.Equal(t, "hami-core", first.Isolation)
	require.Equal(t, "t1", first.Tenant)
	require.False(t, first.Draining)
	require.False(t, first.CreatedAt.IsZero())
	require.Equal(t, 1, ledger[1].DevicePos)
	require.Equal(t, t2.ID, ledger[2].TaskID)
	all, err := s.ListAllocations(ctx(t), "")
	require.NoError(t, err)
	require.Len(t, all, 3)
	none, err := s.ListAllocations(ctx(t), "other")
	require.NoError(t, err)
	require.Empty(t, none)

	open1, err := s.OpenAssignments(ctx(t), n.ID)
	require.NoError(t, err)
	require.Len(t, open1, 2)

	// One stale binding (t1 is no longer queued) fails the whole batch.
	t3 := queuedTask(t, s, nil)
	b3 := binding(t3, n.ID, 1)
	_, err = s.BindTasks(ctx(t), []controlplane.Binding{b3, binding(t1, n.ID, 1)})
	require.ErrorIs(t, err, controlplane.ErrConflict)
	still, err := s.GetTask(ctx(t), t3.ID)
	require.NoError(t, err)
	require.Equal(t, controlplane.TaskQueued, still.State)
	all, err = s.ListAllocations(ctx(t), "")
	require.NoError(t, err)
	require.Len(t, all, 3, "no ledger rows of the failed batch")
	open2, err := s.OpenAssignments(ctx(t), n.ID)
	require.NoError(t, err)
	require.Len(t, open2, 2, "no assignment of the failed batch")

	// A device slot is taken once per attempt.
	t4 := queuedTask(t, s, nil)
	b4 := binding(t4, n.ID, 1)
	b4.Allocations = append(b4.Allocations, b4.Allocations[0])
	_, err = s.BindTasks(ctx(t), []controlplane.Binding{b4})
	require.ErrorIs(t, err, controlplane.ErrConflict)
}

func testRequeueAndRelease(t *testing.T, open FullOpener) {
	s := open(t)
	n := mkNode(t, s, nil)
	pre, failed, live := queuedTask(t, s, nil), queuedTask(t, s, nil), queuedTask(t, s, nil)
	_, err := s.BindTasks(ctx(t), []controlplane.Binding{binding(pre, n.ID, 1), binding(failed, n.ID, 1), binding(live, n.ID, 1)})
	require.NoError(t, err)

	_, err = s.RequeueTask(ctx(t), controlplane.Transition{TaskID: pre.ID, From: controlplane.TaskScheduled, To: controlplane.TaskFailed})
	require.ErrorIs(t, err, controlplane.ErrInvalid)
	_, err = s.RequeueTask(ctx(t), controlplane.Transition{TaskID: 1 << 40, From: controlplane.TaskScheduled, To: controlplane.TaskQueued})
	require.ErrorIs(t, err, controlplane.ErrNotFound)
	got, err := s.RequeueTask(ctx(t), controlplane.Transition{TaskID: pre.ID, From: controlplane.TaskScheduled,
		To: controlplane.TaskQueued, Reason: "preempted", Actor: "scheduler"})
	require.NoError(t, err)
	require.Equal(t, controlplane.TaskQueued, got.State)
	require.Empty(t, got.NodeID)
	_, err = s.RequeueTask(ctx(t), controlplane.Transition{TaskID: pre.ID, From: controlplane.TaskScheduled, To: controlplane.TaskQueued})
	require.ErrorIs(t, err, controlplane.ErrConflict)

	move(t, s, failed.ID, controlplane.TaskFailed)
	// The failed task's rows are stale; the preempted task's rows drain and
	// the live task's rows stay.
	keys, err := s.ReleaseStale(ctx(t))
	require.NoError(t, err)
	require.Equal(t, []controlplane.AllocationKey{{TaskID: failed.ID, Attempt: 0}}, keys)
	keys, err = s.ReleaseStale(ctx(t))
	require.NoError(t, err)
	require.Empty(t, keys)
	ledger, err := s.ListAllocations(ctx(t), "")
	require.NoError(t, err)
	require.Len(t, ledger, 2)
	require.Equal(t, pre.ID, ledger[0].TaskID)
	require.True(t, ledger[0].Draining)
	require.Equal(t, live.ID, ledger[1].TaskID)
	require.False(t, ledger[1].Draining)

	require.NoError(t, s.ReleaseAllocations(ctx(t), controlplane.AllocationKey{TaskID: pre.ID, Attempt: 0}))
	require.NoError(t, s.ReleaseAllocations(ctx(t), controlplane.AllocationKey{TaskID: pre.ID, Attempt: 0}), "idempotent")
	ledger, err = s.ListAllocations(ctx(t), "")
	require.NoError(t, err)
	require.Len(t, ledger, 1)
	require.Equal(t, live.ID, ledger[0].TaskID)
}

func testRetryable(t *testing.T, open FullOpener) {
	s := open(t)
	retries := func(sp *controlplane.TaskSpec) { sp.MaxRetries = 1 }
	a := move(t, s, mkTask(t, s, 0, retries).ID, controlplane.TaskQueued, controlplane.TaskFailed)
	b := move(t, s, mkTask(t, s, 0, retries).ID, controlplane.TaskQueued, controlplane.TaskTimedOut)
	final := move(t, s, mkTask(t, s, 0, retries).ID, controlplane.TaskQueued, controlplane.TaskFailed)
	move(t, s, mkTask(t, s, 0, nil).ID, controlplane.TaskQueued, controlplane.TaskFailed) // no retries
	require.NoError(t, s.PutTaskSchedule(ctx(t), &controlplane.TaskSchedule{TaskID: final.ID, Final: true}))

	got, err := s.ListRetryable(ctx(t), 0)
	require.NoError(t, err)
	requireIDs(t, []int64{a.ID, b.ID}, taskIDs(got))
	got, err = s.ListRetryable(ctx(t), 1)
	require.NoError(t, err)
	requireIDs(t, []int64{a.ID}, taskIDs(got))

	_, err = s.TransitionTask(ctx(t), controlplane.Transition{TaskID: a.ID, From: controlplane.TaskFailed,
		To: controlplane.TaskQueued, Retry: true})
	require.NoError(t, err)
	move(t, s, a.ID, controlplane.TaskFailed)
	got, err = s.ListRetryable(ctx(t), 0)
	require.NoError(t, err)
	requireIDs(t, []int64{b.ID}, taskIDs(got)) // a has used its retry
}
