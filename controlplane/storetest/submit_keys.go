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
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			errs[i] = s.CreateTask(ctx(t), &controlplane.Task{Spec: MinimalSpec("race"), OwnerID: alice.ID,
				SubmitKey: &controlplane.SubmitKey{Key: "race-key", Hash: "h"}})
		})
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
	_, total, err := s.ListTasks(ctx(t), controlplane.TaskFilter{OwnerID: alice.ID, Query: "race"})
	require.NoError(t, err)
	require.Equal(t, 1, total)
}

// testPruneSubmitKeys: retention clears the keys of tasks created before
// its bound (the tasks stay), after which the key may be used again.
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
}
