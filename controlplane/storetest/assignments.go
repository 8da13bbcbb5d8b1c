package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
)

func testAssignments(t *testing.T, open FullOpener) {
	s := open(t)
	n := mkNode(t, s, nil)
	task := queuedTask(t, s, nil)
	got, run := assign(t, s, task, n.ID)
	require.Equal(t, controlplane.TaskScheduled, got.State)
	require.Equal(t, n.ID, got.NodeID)
	require.NotZero(t, run.ID)
	require.Equal(t, got.Attempt, run.Attempt)

	// A second assignment of the same task fails the guard and writes nothing.
	_, err := s.AssignTask(ctx(t), &controlplane.Assignment{NodeID: n.ID, Kind: controlplane.AssignRun, TaskID: task.ID},
		controlplane.Transition{TaskID: task.ID, From: controlplane.TaskQueued, To: controlplane.TaskScheduled, NodeID: &n.ID})
	require.ErrorIs(t, err, controlplane.ErrConflict)
	// An assignment to an unknown node fails and rolls the transition back.
	other := queuedTask(t, s, nil)
	missing := "missing-node"
	_, err = s.AssignTask(ctx(t), &controlplane.Assignment{NodeID: missing, Kind: controlplane.AssignRun, TaskID: other.ID},
		controlplane.Transition{TaskID: other.ID, From: controlplane.TaskQueued, To: controlplane.TaskScheduled, NodeID: &missing})
	require.ErrorIs(t, err, controlplane.ErrConflict)
	still, err := s.GetTask(ctx(t), other.ID)
	require.NoError(t, err)
	require.Equal(t, controlplane.TaskQueued, still.State, "transition rolled back with the failed insert")

	manage := &controlplane.Assignment{NodeID: n.ID, Kind: controlplane.AssignManage, Payload: json.RawMessage(`{"op":"drain","args":["x"]}`)}
	require.NoError(t, s.CreateAssignment(ctx(t), manage))
	empty := &controlplane.Assignment{NodeID: n.ID, Kind: controlplane.AssignManage}
	require.NoError(t, s.CreateAssignment(ctx(t), empty))

	open1, err := s.OpenAssignments(ctx(t), n.ID)
	require.NoError(t, err)
	require.Len(t, open1, 3)
	require.Equal(t, []int64{run.ID, manage.ID, empty.ID}, []int64{open1[0].ID, open1[1].ID, open1[2].ID}, "oldest first")
	require.JSONEq(t, `{"task":1}`, string(open1[0].Payload))
	require.JSONEq(t, `{"op":"drain","args":["x"]}`, string(open1[1].Payload))
	require.JSONEq(t, `{}`, string(open1[2].Payload))
	require.Nil(t, open1[1].Result)

	require.NoError(t, s.CloseAssignment(ctx(t), manage.ID, json.RawMessage(`{"ok":true}`)))
	a, err := s.GetAssignment(ctx(t), manage.ID)
	require.NoError(t, err)
	require.NotNil(t, a.DoneAt)
	require.JSONEq(t, `{"ok":true}`, string(a.Result))
	// Closing again keeps the first close time and, without a result, the result.
	require.NoError(t, s.CloseAssignment(ctx(t), manage.ID, nil))
	b, err := s.GetAssignment(ctx(t), manage.ID)
	require.NoError(t, err)
	require.Equal(t, a.DoneAt, b.DoneAt)
	require.JSONEq(t, `{"ok":true}`, string(b.Result))

	open2, err := s.OpenAssignments(ctx(t), n.ID)
	require.NoError(t, err)
	require.Len(t, open2, 2)
	require.ErrorIs(t, s.CloseAssignment(ctx(t), 1<<40, nil), controlplane.ErrNotFound)
	_, err = s.GetAssignment(ctx(t), 1<<40)
	require.ErrorIs(t, err, controlplane.ErrNotFound)
	none, err := s.OpenAssignments(ctx(t), "nobody")
	require.NoError(t, err)
	require.Empty(t, none)
}

func testApplyNodeStatus(t *testing.T, open FullOpener) {
	s := open(t)
	n := mkNode(t, s, nil)
	task, run := assign(t, s, queuedTask(t, s, nil), n.ID)

	_, err := s.ApplyNodeStatus(ctx(t), controlplane.NodeStatus{NodeID: "missing", Seq: 1})
	require.ErrorIs(t, err, controlplane.ErrNotFound)

	ok, err := s.ApplyNodeStatus(ctx(t), controlplane.NodeStatus{NodeID: n.ID, Seq: 1, TaskID: task.ID, To: controlplane.TaskRunning})
	require.NoError(t, err)
	require.True(t, ok)
	got, err := s.GetTask(ctx(t), task.ID)
	require.NoError(t, err)
	require.Equal(t, controlplane.TaskRunning, got.State)
	a, err := s.GetAssignment(ctx(t), run.ID)
	require.NoError(t, err)
	require.NotNil(t, a.DoneAt, "the run is no longer delivered")
	require.Nil(t, a.Result, "but its end is not reported yet")

	// A duplicate (same or lower seq) changes nothing.
	ok, err = s.ApplyNodeStatus(ctx(t), controlplane.NodeStatus{NodeID: n.ID, Seq: 1, TaskID: task.ID, To: controlplane.TaskFailed})
	require.NoError(t, err)
	require.False(t, ok)
	node, err := s.GetNode(ctx(t), n.ID)
	require.NoError(t, err)
	require.Equal(t, uint64(1), node.LastStatusSeq)

	// Another node's report of the task does not move it.
	other := mkNode(t, s, nil)
	ok, err = s.ApplyNodeStatus(ctx(t), controlplane.NodeStatus{NodeID: other.ID, Seq: 5, TaskID: task.ID, To: controlplane.TaskFailed})
	require.NoError(t, err)
	require.True(t, ok)
	got, err = s.GetTask(ctx(t), task.ID)
	require.NoError(t, err)
	require.Equal(t, controlplane.TaskRunning, got.State)

	// The end: transition with exit code, run result, open cancel closed.
	cancel := &controlplane.Assignment{NodeID: n.ID, Kind: controlplane.AssignCancel, TaskID: task.ID, Attempt: task.Attempt}
	require.NoError(t, s.CreateAssignment(ctx(t), cancel))
	code := 3
	ok, err = s.ApplyNodeStatus(ctx(t), controlplane.NodeStatus{NodeID: n.ID, Seq: 2, TaskID: task.ID,
		To: controlplane.TaskFailed, Reason: "exit 3", ExitCode: &code})
	require.NoError(t, err)
	require.True(t, ok)
	got, err = s.GetTask(ctx(t), task.ID)
	require.NoError(t, err)
	require.Equal(t, controlplane.TaskFailed, got.State)
	require.Equal(t, &code, got.ExitCode)
	require.Equal(t, "exit 3", got.Reason)
	a, err = s.GetAssignment(ctx(t), run.ID)
	require.NoError(t, err)
	require.JSONEq(t, `"failed"`, string(a.Result))
	c, err := s.GetAssignment(ctx(t), cancel.ID)
	require.NoError(t, err)
	require.NotNil(t, c.DoneAt)
	events, err := s.ListTaskEvents(ctx(t), task.ID)
	require.NoError(t, err)
	require.Equal(t, "node:"+n.ID, events[len(events)-1].Actor)

	// A management result closes its assignment.
	m := &controlplane.Assignment{NodeID: n.ID, Kind: controlplane.AssignManage}
	require.NoError(t, s.CreateAssignment(ctx(t), m))
	ok, err = s.ApplyNodeStatus(ctx(t), controlplane.NodeStatus{NodeID: n.ID, Seq: 3, AssignmentID: m.ID,
		Result: json.RawMessage(`{"done":1}`)})
	require.NoError(t, err)
	require.True(t, ok)
	m2, err := s.GetAssignment(ctx(t), m.ID)
	require.NoError(t, err)
	require.NotNil(t, m2.DoneAt)
	require.JSONEq(t, `{"done":1}`, string(m2.Result))
}

func testRunsToStop(t *testing.T, open FullOpener) {
	s := open(t)
	n := mkNode(t, s, nil)
	since := time.Now().Add(-time.Hour)
	keep, _ := assign(t, s, queuedTask(t, s, nil), n.ID)
	stop, run := assign(t, s, queuedTask(t, s, nil), n.ID)
	ended, _ := assign(t, s, queuedTask(t, s, nil), n.ID)
	move(t, s, stop.ID, controlplane.TaskCancelled)
	move(t, s, ended.ID, controlplane.TaskRunning)
	_, err := s.ApplyNodeStatus(ctx(t), controlplane.NodeStatus{NodeID: n.ID, Seq: 1, TaskID: ended.ID, To: controlplane.TaskSucceeded})
	require.NoError(t, err)
	_ = keep

	got, err := s.RunsToStop(ctx(t), since)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, run.ID, got[0].ID)
	require.Equal(t, stop.ID, got[0].TaskID)

	none, err := s.RunsToStop(ctx(t), time.Now().Add(time.Hour))
	require.NoError(t, err)
	require.Empty(t, none, "only runs created after since")

	// Once its cancel is queued the run is not listed again.
	require.NoError(t, s.CreateAssignment(ctx(t), &controlplane.Assignment{NodeID: n.ID, Kind: controlplane.AssignCancel,
		TaskID: stop.ID, Attempt: run.Attempt}))
	got, err = s.RunsToStop(ctx(t), since)
	require.NoError(t, err)
	require.Empty(t, got)
}

func testTaskLogs(t *testing.T, open FullOpener) {
	s := open(t)
	task := mkTask(t, s, 0, nil)
	chunk := func(off int64, data string) *controlplane.TaskLogChunk {
		return &controlplane.TaskLogChunk{TaskID: task.ID, Stream: "stdout", Offset: off, Data: []byte(data)}
	}
	require.NoError(t, s.AppendTaskLogs(ctx(t), nil))
	require.NoError(t, s.AppendTaskLogs(ctx(t), []*controlplane.TaskLogChunk{chunk(0, "hello "), chunk(6, "world\x00\n")}))
	// A resend (and a duplicate within one batch) is a no-op.
	require.NoError(t, s.AppendTaskLogs(ctx(t), []*controlplane.TaskLogChunk{chunk(6, "CHANGED"), chunk(14, "!"), chunk(14, "?")}))
	require.NoError(t, s.AppendTaskLogs(ctx(t), []*controlplane.TaskLogChunk{
		{TaskID: task.ID, Stream: "stderr", Offset: 0, Data: []byte("err")}}))

	read := func(offset int64, limit int) []string {
		t.Helper()
		cs, err := s.ReadTaskLogs(ctx(t), task.ID, 0, "stdout", offset, limit)
		require.NoError(t, err)
		out := []string{}
		for _, c := range cs {
			require.Equal(t, "stdout", c.Stream)
			out = append(out, string(c.Data))
		}
		return out
	}
	require.Equal(t, []string{"hello ", "world\x00\n", "!"}, read(0, 0))
	require.Equal(t, []string{"world\x00\n", "!"}, read(8, 0), "the chunk holding the offset comes first")
	require.Equal(t, []string{"hello "}, read(0, 1))
	require.Equal(t, []string{}, read(15, 0))
	other, err := s.ReadTaskLogs(ctx(t), task.ID, 1, "stdout", 0, 0)
	require.NoError(t, err)
	require.Empty(t, other, "attempts are separate")

	err = s.AppendTaskLogs(ctx(t), []*controlplane.TaskLogChunk{{TaskID: 1 << 40, Stream: "stdout", Data: []byte("x")}})
	require.ErrorIs(t, err, controlplane.ErrNotFound)
}
