package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
)

// testSubmitKeys: a task submitted with an idempotency key is found again
// by its owner and key, and a second task with the same owner and key is
// refused (ErrConflict) without being stored, even when the two arrive in
// the same group commit; other owners keep their own keys.
func testSubmitKeys(t *testing.T, open Opener) {
	s := open(t)
	alice := mkUser(t, s, "alice", controlplane.RoleUser)
	bob := mkUser(t, s, "bob", controlplane.RoleUser)
	key := &controlplane.SubmitKey{Key: "retry-7f3a", Hash: "h1"}

	first := &controlplane.Task{Spec: MinimalSpec("keyed"), OwnerID: alice.ID, SubmitKey: key}
	require.NoError(t, s.CreateTask(ctx(t), first))
	got, hash, err := s.TaskBySubmitKey(ctx(t), alice.ID, key.Key)
	require.NoError(t, err)
	require.Equal(t, first.ID, got.ID)
	require.Equal(t, "h1", hash)
	require.Nil(t, got.SubmitKey, "the key is not read back with the task")

	again := &controlplane.Task{Spec: MinimalSpec("keyed"), OwnerID: alice.ID,
		SubmitKey: &controlplane.SubmitKey{Key: key.Key, Hash: "h2"}}
	require.ErrorIs(t, s.CreateTask(ctx(t), again), controlplane.ErrConflict)
	require.Zero(t, again.ID, "a refused task is not stored")

	other := &controlplane.Task{Spec: MinimalSpec("keyed"), OwnerID: bob.ID, SubmitKey: key}
	require.NoError(t, s.CreateTask(ctx(t), other), "keys are per owner")
	unkeyed := &controlplane.Task{Spec: MinimalSpec("plain"), OwnerID: alice.ID}
	require.NoError(t, s.CreateTask(ctx(t), unkeyed))

	_, _, err = s.TaskBySubmitKey(ctx(t), alice.ID, "never-used")
	require.ErrorIs(t, err, controlplane.ErrNotFound)
	_, _, err = s.TaskBySubmitKey(ctx(t), bob.ID, "never-used")
	require.ErrorIs(t, err, controlplane.ErrNotFound)

	// Eight concurrent submissions with one key (a client retrying through
	// several servers): exactly one is stored.
	oneOfEight(t, func() error {
		return s.CreateTask(ctx(t), &controlplane.Task{Spec: MinimalSpec("race"), OwnerID: alice.ID,
			SubmitKey: &controlplane.SubmitKey{Key: "race-key", Hash: "h"}})
	})
	_, total, err := s.ListTasks(ctx(t), controlplane.TaskFilter{OwnerID: alice.ID, Query: "race"})
	require.NoError(t, err)
	require.Equal(t, 1, total)
}

// testWorkflowSubmitKeys: the same contract for workflows. A workflow
// submitted with a key is found again by its owner and key; a second one
// with the same owner and key is refused (ErrConflict) with nothing stored,
// its steps included; keys are per owner, and a task's key is not a
// workflow's.
func testWorkflowSubmitKeys(t *testing.T, open WorkflowOpener) {
	s := open(t)
	alice := mkUser(t, s, "alice", controlplane.RoleUser)
	bob := mkUser(t, s, "bob", controlplane.RoleUser)
	keyed := func(owner int64, name, key, hash string) (*controlplane.Workflow, error) {
		w := &controlplane.Workflow{Name: name, Spec: []byte(`{}`), OwnerID: owner, Reason: "submitted",
			SubmitKey: &controlplane.SubmitKey{Key: key, Hash: hash}}
		return w, s.CreateWorkflow(ctx(t), w, []*controlplane.WorkflowStep{{Name: "a", Step: "a", Index: -1}})
	}

	first, err := keyed(alice.ID, "keyed", "wf-7f3a", "h1")
	require.NoError(t, err)
	got, hash, err := s.WorkflowBySubmitKey(ctx(t), alice.ID, "wf-7f3a")
	require.NoError(t, err)
	require.Equal(t, first.ID, got.ID)
	require.Equal(t, "keyed", got.Name)
	require.Equal(t, "h1", hash)
	require.Nil(t, got.SubmitKey, "the key is not read back with the workflow")

	again, err := keyed(alice.ID, "keyed-again", "wf-7f3a", "h2")
	require.ErrorIs(t, err, controlplane.ErrConflict)
	require.Zero(t, again.ID, "a refused workflow is not stored")
	_, total, err := s.ListWorkflows(ctx(t), controlplane.WorkflowFilter{OwnerID: alice.ID})
	require.NoError(t, err)
	require.Equal(t, 1, total, "nothing of the refused workflow is stored")

	_, err = keyed(bob.ID, "bobs", "wf-7f3a", "h1")
	require.NoError(t, err, "keys are per owner")
	_, _, err = s.WorkflowBySubmitKey(ctx(t), alice.ID, "never-used")
	require.ErrorIs(t, err, controlplane.ErrNotFound)

	require.NoError(t, s.CreateTask(ctx(t), &controlplane.Task{Spec: MinimalSpec("task"), OwnerID: alice.ID,
		SubmitKey: &controlplane.SubmitKey{Key: "shared", Hash: "t"}}))
	_, _, err = s.WorkflowBySubmitKey(ctx(t), alice.ID, "shared")
	require.ErrorIs(t, err, controlplane.ErrNotFound, "a task's key is not a workflow's")
	_, err = keyed(alice.ID, "wf", "shared", "w")
	require.NoError(t, err, "a key used by a task may key a workflow")

	// Eight concurrent submissions with one key: exactly one is stored.
	oneOfEight(t, func() error { _, err := keyed(alice.ID, "race", "race-key", "h"); return err })
}

// oneOfEight runs create eight times at once (a client retrying one key
// through several servers) and requires that exactly one succeeds and the
// others are refused with ErrConflict.
func oneOfEight(t *testing.T, create func() error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { errs[i] = create() })
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
		} else {
			require.ErrorIs(t, err, controlplane.ErrConflict)
		}
	}
	require.Equal(t, 1, ok)
}

// testPruneSubmitKeys: retention clears the keys of tasks, workflows and
// forwarded tasks created before its bound (they stay), after which a key
// may be used again.
func testPruneSubmitKeys(t *testing.T, open RetentionOpener) {
	s := open(t)
	u := mkUser(t, s, "carol", controlplane.RoleUser)
	task := &controlplane.Task{Spec: MinimalSpec("keyed"), OwnerID: u.ID, SubmitKey: &controlplane.SubmitKey{Key: "k", Hash: "h"}}
	require.NoError(t, s.CreateTask(ctx(t), task))

	_, err := s.PruneSubmitKeys(ctx(t), controlplane.PruneRule{Before: time.Now().Add(time.Hour)})
	require.ErrorIs(t, err, controlplane.ErrInvalid, "a limit is required")
	p, err := s.PruneSubmitKeys(ctx(t), controlplane.PruneRule{Before: task.CreatedAt.Add(-time.Hour), Limit: 10})
	require.NoError(t, err)
	require.Zero(t, p.Rows, "a younger key stays")
	_, _, err = s.TaskBySubmitKey(ctx(t), u.ID, "k")
	require.NoError(t, err)

	p, err = s.PruneSubmitKeys(ctx(t), controlplane.PruneRule{Before: task.CreatedAt.Add(time.Hour), Limit: 10})
	require.NoError(t, err)
	require.EqualValues(t, 1, p.Rows)
	_, _, err = s.TaskBySubmitKey(ctx(t), u.ID, "k")
	require.ErrorIs(t, err, controlplane.ErrNotFound)
	_, err = s.GetTask(ctx(t), task.ID)
	require.NoError(t, err, "the task stays")
	reuse := &controlplane.Task{Spec: MinimalSpec("keyed"), OwnerID: u.ID, SubmitKey: &controlplane.SubmitKey{Key: "k", Hash: "h"}}
	require.NoError(t, s.CreateTask(ctx(t), reuse), "a cleared key may be used again")

	// Workflows' keys go by the same rule.
	ws, ok := s.(controlplane.WorkflowStore)
	require.True(t, ok, "both stores keep workflows")
	wf := &controlplane.Workflow{Name: "wf", Spec: []byte(`{}`), OwnerID: u.ID, SubmitKey: &controlplane.SubmitKey{Key: "wk", Hash: "h"}}
	require.NoError(t, ws.CreateWorkflow(ctx(t), wf, []*controlplane.WorkflowStep{{Name: "a", Step: "a", Index: -1}}))
	p, err = s.PruneSubmitKeys(ctx(t), controlplane.PruneRule{Before: wf.CreatedAt.Add(-time.Hour), Limit: 10})
	require.NoError(t, err)
	require.Zero(t, p.Rows, "a younger workflow key stays")
	p, err = s.PruneSubmitKeys(ctx(t), controlplane.PruneRule{Before: wf.CreatedAt.Add(time.Hour), Limit: 10})
	require.NoError(t, err)
	require.EqualValues(t, 2, p.Rows, "the reused task key and the workflow key")
	_, _, err = ws.WorkflowBySubmitKey(ctx(t), u.ID, "wk")
	require.ErrorIs(t, err, controlplane.ErrNotFound)
	_, err = ws.GetWorkflow(ctx(t), wf.ID)
	require.NoError(t, err, "the workflow stays")

	// So do the hub's forwarded tasks'.
	cs, ok := s.(controlplane.ClusterStore)
	require.True(t, ok, "both stores keep the hub's forwarded tasks")
	ft := &controlplane.ForwardedTask{Cluster: "east", OwnerID: u.ID, State: controlplane.ForwardedForwarding,
		SubmitKey: &controlplane.SubmitKey{Key: "fk", Hash: "h"}}
	require.NoError(t, cs.CreateForwardedTask(ctx(t), ft))
	p, err = s.PruneSubmitKeys(ctx(t), controlplane.PruneRule{Before: ft.CreatedAt.Add(time.Hour), Limit: 10})
	require.NoError(t, err)
	require.EqualValues(t, 1, p.Rows)
	_, _, err = cs.ForwardedTaskBySubmitKey(ctx(t), u.ID, "fk")
	require.ErrorIs(t, err, controlplane.ErrNotFound)
	_, err = cs.GetForwardedTask(ctx(t), ft.ID)
	require.NoError(t, err, "the forwarded task stays")
}
