package storetest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
)

// race runs fn n times at once and returns the errors (nil for success).
// The goroutines start together from a barrier.
func race(n int, fn func(i int) error) []error {
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = fn(i)
		})
	}
	close(start)
	wg.Wait()
	return errs
}

// warm has n reads in flight at once, so that a pooled store holds open
// connections before a race: otherwise the first caller finishes on the
// one warm connection while the others are still connecting, and the race
// never overlaps.
func warm(t *testing.T, s FullStore, n int) {
	t.Helper()
	for _, err := range race(n, func(int) error {
		_, err := s.ListTasksByState(ctx(t), []controlplane.TaskState{controlplane.TaskQueued}, 1)
		if err == nil {
			_, err = s.ListAllocations(ctx(t), "warm")
		}
		return err
	}) {
		require.NoError(t, err)
	}
}

// requireOneWinner checks exactly one call succeeded and every other one
// failed with want.
func requireOneWinner(t *testing.T, errs []error, want error) {
	t.Helper()
	wins := 0
	for _, err := range errs {
		if err == nil {
			wins++
			continue
		}
		require.ErrorIs(t, err, want)
	}
	require.Equal(t, 1, wins, "exactly one winner: %v", errs)
}

// testRacesExt races the writes whose correctness PostgreSQL gets from row
// locks and SQLite from its single writer: one token enrolls one node, one
// outbox entry applies once, one queued task binds once.
func testRacesExt(t *testing.T, open FullOpener) {
	s := open(t)
	const n = 6
	warm(t, s, n)
	t.Run("EnrollOneToken", func(t *testing.T) {
		hash := mkToken(t, s)
		errs := race(n, func(i int) error {
			return s.EnrollNode(ctx(t), hash, &controlplane.Node{ID: fmt.Sprintf("race-%d-%d", uniq(), i), Hostname: "h"})
		})
		requireOneWinner(t, errs, controlplane.ErrConflict)
	})
	t.Run("StatusOnce", func(t *testing.T) {
		node := mkNode(t, s, nil)
		var mu sync.Mutex
		applied := 0
		errs := race(n, func(int) error {
			ok, err := s.ApplyNodeStatus(ctx(t), controlplane.NodeStatus{NodeID: node.ID, Seq: 7})
			if ok {
				mu.Lock()
				applied++
				mu.Unlock()
			}
			return err
		})
		for _, err := range errs {
			require.NoError(t, err)
		}
		require.Equal(t, 1, applied)
	})
	t.Run("BindOnce", func(t *testing.T) {
		node := mkNode(t, s, nil)
		task := queuedTask(t, s, nil)
		errs := race(n, func(int) error {
			_, err := s.BindTasks(ctx(t), []controlplane.Binding{binding(task, node.ID, 1)})
			return err
		})
		requireOneWinner(t, errs, controlplane.ErrConflict)
		ledger, err := s.ListAllocations(ctx(t), node.ID)
		require.NoError(t, err)
		require.Len(t, ledger, 1, "one placement in the ledger")
		open, err := s.OpenAssignments(ctx(t), node.ID)
		require.NoError(t, err)
		require.Len(t, open, 1, "one run assignment")
	})
}
