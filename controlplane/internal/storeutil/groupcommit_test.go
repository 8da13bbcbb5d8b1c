package storeutil_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

var errBad = errors.New("bad item")

// fakeDB is an all-or-nothing writer: a batch holding a negative item fails
// as a whole. The first write blocks until gate is closed, so that the test
// can queue requests behind it and know they form one batch.
type fakeDB struct {
	entered chan struct{} // closed when the first write starts
	gate    chan struct{}
	mu      sync.Mutex
	stored  []int
	batches [][]int
	first   sync.Once
	opened  sync.Once
}

// newGroup returns a fake database and a GroupCommit writing to it; on
// cleanup the gate opens before Close waits for the workers, so a failed
// assertion cannot hang the test.
func newGroup(t *testing.T, maxBatch, workers int) (*fakeDB, *storeutil.GroupCommit[int]) {
	f := &fakeDB{entered: make(chan struct{}), gate: make(chan struct{})}
	g := storeutil.NewGroupCommit(maxBatch, workers, f.write)
	t.Cleanup(g.Close)
	t.Cleanup(f.release)
	return f, g
}

func (f *fakeDB) release() { f.opened.Do(func() { close(f.gate) }) }

func (f *fakeDB) write(_ context.Context, items []int) error {
	f.first.Do(func() {
		close(f.entered)
		<-f.gate
	})
	f.mu.Lock()
	defer f.mu.Unlock()
	f.batches = append(f.batches, slices.Clone(items))
	for _, v := range items {
		if v < 0 {
			return fmt.Errorf("item %d: %w", v, errBad)
		}
	}
	f.stored = append(f.stored, items...)
	return nil
}

// queueBehindBlocker submits a blocker that holds the only worker, then the
// items, waits until `queued` of them wait in the queue (the rest block on a
// full queue), and opens the gate.
func queueBehindBlocker(t *testing.T, g *storeutil.GroupCommit[int], f *fakeDB, items []int, queued int) map[int]error {
	t.Helper()
	var mu sync.Mutex
	results := map[int]error{}
	var wg sync.WaitGroup
	submit := func(v int) {
		defer wg.Done()
		err := g.Do(t.Context(), v)
		mu.Lock()
		results[v] = err
		mu.Unlock()
	}
	wg.Add(1)
	go submit(0)
	<-f.entered
	for _, v := range items {
		wg.Add(1)
		go submit(v)
	}
	require.Eventually(t, func() bool { return g.Queued() == queued }, 10*time.Second, time.Millisecond)
	f.release()
	wg.Wait()
	return results
}

func TestGroupCommitBadItemFailsAlone(t *testing.T) {
	f, g := newGroup(t, 256, 1)
	items := []int{1, 2, -3, 4, 5}
	results := queueBehindBlocker(t, g, f, items, len(items))

	for _, v := range append([]int{0}, items...) {
		if v < 0 {
			require.ErrorIs(t, results[v], errBad, "the bad item gets its own error")
		} else {
			require.NoError(t, results[v], "item %d must not fail with its bad neighbour", v)
		}
	}
	require.ElementsMatch(t, []int{0, 1, 2, 4, 5}, f.stored)
	// The blocker alone, then the five as one batch, then one by one.
	require.Equal(t, []int{0}, f.batches[0])
	require.ElementsMatch(t, items, f.batches[1])
	require.Len(t, f.batches, 2+len(items))
	for _, b := range f.batches[2:] {
		require.Len(t, b, 1)
	}
}

func TestGroupCommitBatchesWaitingRequests(t *testing.T) {
	f, g := newGroup(t, 3, 1)
	// The queue holds maxBatch requests; the other four wait to enter it.
	results := queueBehindBlocker(t, g, f, []int{1, 2, 3, 4, 5, 6, 7}, 3)
	for v, err := range results {
		require.NoError(t, err, "item %d", v)
	}
	require.ElementsMatch(t, []int{0, 1, 2, 3, 4, 5, 6, 7}, f.stored)
	for _, b := range f.batches {
		require.LessOrEqual(t, len(b), 3, "batches respect the limit")
	}
	require.Len(t, f.batches[1], 3, "the full queue went in one batch")
}

func TestGroupCommitCancelledCallerIsNotWritten(t *testing.T) {
	f, g := newGroup(t, 256, 1)
	go func() { _ = g.Do(t.Context(), 0) }()
	<-f.entered
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- g.Do(ctx, 9) }()
	require.Eventually(t, func() bool { return g.Queued() == 1 }, 10*time.Second, time.Millisecond)
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	f.release()
	require.NoError(t, g.Do(t.Context(), 1)) // the worker has moved past 9
	f.mu.Lock()
	defer f.mu.Unlock()
	require.NotContains(t, f.stored, 9)
}

func TestGroupCommitClose(t *testing.T) {
	f, g := newGroup(t, 256, 2)
	f.release()
	require.NoError(t, g.Do(t.Context(), 1))
	g.Close()
	g.Close() // idempotent
	require.ErrorIs(t, g.Do(t.Context(), 2), controlplane.ErrUnavailable)
	require.Equal(t, []int{1}, f.stored)
}
