package scheduling

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestLeaseKeeperEndsLeadershipWithTheLease: the leadership context lives
// while renewals succeed (however long a tick takes) and is cancelled as
// soon as a renewal fails, or, when renewals hang, when the lease runs out;
// taking the lease again is a new generation.
func TestLeaseKeeperEndsLeadershipWithTheLease(t *testing.T) {
	t.Parallel()
	var mode atomic.Int32 // 0 grant, 1 refuse, 2 hang until the call's deadline
	k := newLeaseKeeper(300*time.Millisecond, 10*time.Millisecond, func(ctx context.Context, _ time.Duration) (bool, error) {
		switch mode.Load() {
		case 1:
			return false, nil
		case 2:
			<-ctx.Done()
			return false, ctx.Err()
		}
		return true, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go k.run(ctx, func(error) {})
	waitHeld := func() (context.Context, int) {
		t.Helper()
		var lead context.Context
		var gen int
		require.Eventually(t, func() bool {
			var held bool
			lead, gen, held = k.current()
			return held
		}, 5*time.Second, time.Millisecond)
		return lead, gen
	}
	lead, gen := waitHeld()
	time.Sleep(900 * time.Millisecond) // three lease lengths: renewals keep it
	require.NoError(t, lead.Err())

	mode.Store(1) // another server holds it
	require.Eventually(t, func() bool { return lead.Err() != nil }, 2*time.Second, time.Millisecond)
	_, _, held := k.current()
	require.False(t, held)

	mode.Store(0)
	lead2, gen2 := waitHeld()
	require.Greater(t, gen2, gen, "a new leadership")

	mode.Store(2) // the store hangs: the lease's own time ends it
	require.Eventually(t, func() bool { return errors.Is(lead2.Err(), context.Canceled) }, 2*time.Second, time.Millisecond)
}
