package storetest

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
)

var seq atomic.Int64

// uniq returns a process-unique suffix for names.
func uniq() int64 { return seq.Add(1) }

func mkUser(t *testing.T, s controlplane.Store, name string, role controlplane.Role) *controlplane.User {
	t.Helper()
	u := &controlplane.User{Username: name, Role: role, PasswordHash: "hash-" + name}
	require.NoError(t, s.CreateUser(ctx(t), u))
	return u
}

// MinimalSpec is the smallest valid task spec.
func MinimalSpec(name string) controlplane.TaskSpec {
	return controlplane.TaskSpec{Name: name, Command: []string{"/bin/true"}}
}

func mkTask(t *testing.T, s controlplane.Store, ownerID int64, mut func(*controlplane.TaskSpec)) *controlplane.Task {
	t.Helper()
	task := &controlplane.Task{OwnerID: ownerID, Spec: MinimalSpec(fmt.Sprintf("task-%d", uniq()))}
	if mut != nil {
		mut(&task.Spec)
	}
	require.NoError(t, s.CreateTask(ctx(t), task))
	return task
}

// move applies a chain of transitions and fails the test on any error.
func move(t *testing.T, s controlplane.Store, id int64, states ...controlplane.TaskState) *controlplane.Task {
	t.Helper()
	cur, err := s.GetTask(ctx(t), id)
	require.NoError(t, err)
	for _, to := range states {
		cur, err = s.TransitionTask(ctx(t), controlplane.Transition{TaskID: id, From: cur.State, To: to, Actor: "test"})
		require.NoError(t, err, "%s → %s", cur.State, to)
	}
	return cur
}

func taskIDs(ts []*controlplane.Task) []int64 {
	out := make([]int64, len(ts))
	for i, t := range ts {
		out[i] = t.ID
	}
	return out
}

func ptr[T any](v T) *T { return &v }

// requireIDs compares ordered IDs, treating nil and empty alike.
func requireIDs(t *testing.T, want, got []int64) {
	t.Helper()
	if len(want) == 0 {
		require.Empty(t, got)
		return
	}
	require.Equal(t, want, got)
}
