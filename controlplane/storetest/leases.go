package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
)

func testLease(t *testing.T, open FullOpener) {
	s := open(t)
	_, err := s.AcquireLease(ctx(t), "", "a", time.Minute)
	require.ErrorIs(t, err, controlplane.ErrInvalid)
	_, err = s.AcquireLease(ctx(t), "l", "a", 0)
	require.ErrorIs(t, err, controlplane.ErrInvalid)
	leaseAcrossHolders(t, s, s, "lease")
}

// leaseAcrossHolders checks the lease contract between a (holder "a") and
// b (holder "b"), which may be the same store or two handles on one
// database.
func leaseAcrossHolders(t *testing.T, a, b controlplane.SchedulingStore, name string) {
	t.Helper()
	acquire := func(s controlplane.SchedulingStore, holder string, ttl time.Duration) bool {
		t.Helper()
		ok, err := s.AcquireLease(ctx(t), name, holder, ttl)
		require.NoError(t, err)
		return ok
	}
	require.True(t, acquire(a, "a", time.Hour), "a free lease is taken")
	require.False(t, acquire(b, "b", time.Hour), "a live lease is not")
	require.True(t, acquire(a, "a", time.Hour), "the holder renews")
	require.NoError(t, b.ReleaseLease(ctx(t), name, "b"), "releasing another's lease is a no-op")
	require.False(t, acquire(b, "b", time.Hour))
	require.NoError(t, a.ReleaseLease(ctx(t), name, "a"))
	require.True(t, acquire(b, "b", time.Hour), "a released lease is free")

	// Takeover after expiry: b renews with a ttl that ends at once; a
	// millisecond-scale wait (far above the stores' microsecond precision)
	// lets it lapse.
	require.True(t, acquire(b, "b", time.Microsecond))
	time.Sleep(20 * time.Millisecond)
	require.True(t, acquire(a, "a", time.Hour), "an expired lease is taken over")
	require.False(t, acquire(b, "b", time.Hour), "and the old holder is out")
}

// PairOpener returns two handles on one fresh database (two servers sharing
// it) and registers their Close with t.Cleanup.
type PairOpener func(t *testing.T) (a, b controlplane.SchedulingStore)

// RunLeaseHolders runs the leader-lease suite across two store handles: one
// leader at a time, renewal, release and takeover after expiry, and a race
// of many would-be leaders through both handles of which exactly one wins.
func RunLeaseHolders(t *testing.T, open PairOpener) {
	t.Run("Contract", func(t *testing.T) {
		a, b := open(t)
		leaseAcrossHolders(t, a, b, "scheduler")
	})
	t.Run("Race", func(t *testing.T) {
		a, b := open(t)
		const perHandle = 8
		for round := range 3 {
			name := fmt.Sprintf("race-%d", round)
			var wg sync.WaitGroup
			var mu sync.Mutex
			var winners []string
			errs := make(chan error, 2*perHandle)
			for i := range 2 * perHandle {
				s := a
				if i%2 == 1 {
					s = b
				}
				holder := fmt.Sprintf("server-%d", i)
				wg.Go(func() {
					ok, err := s.AcquireLease(ctx(t), name, holder, time.Hour)
					if err != nil {
						errs <- err
						return
					}
					if ok {
						mu.Lock()
						winners = append(winners, holder)
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			require.Len(t, winners, 1, "exactly one leader in round %d: %v", round, winners)
			// Every loser still sees the winner's lease.
			ok, err := b.AcquireLease(ctx(t), name, "late", time.Hour)
			require.NoError(t, err)
			require.False(t, ok)
		}
	})
}
