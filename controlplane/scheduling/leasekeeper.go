package scheduling

import (
	"context"
	"sync"
	"time"
)

// leaseKeeper renews the leader lease on its own goroutine, so that a
// scheduling tick slower than the lease (a loaded machine, a large
// cluster) neither lets the lease lapse nor runs on after it lapsed: the
// leadership context it hands out is cancelled the moment a renewal fails
// or the lease's time runs out unrenewed, which aborts the tick's store
// calls (a bind transaction in flight rolls back) before another server
// can take over.
type leaseKeeper struct {
	acquire func(ctx context.Context, ttl time.Duration) (bool, error)
	ttl     time.Duration
	poll    time.Duration // how often a follower campaigns

	mu     sync.Mutex
	lead   context.Context
	cancel context.CancelFunc
	until  time.Time // monotonic: the lease is ours before this
	timer  *time.Timer
	gen    int // counts leaderships: a lease lost and taken again is a new one
	wake   chan struct{}
}

func newLeaseKeeper(ttl, poll time.Duration, acquire func(context.Context, time.Duration) (bool, error)) *leaseKeeper {
	return &leaseKeeper{acquire: acquire, ttl: ttl, poll: poll, wake: make(chan struct{}, 1)}
}

// run campaigns and renews until ctx ends. err reports failed store calls.
func (k *leaseKeeper) run(ctx context.Context, onErr func(error)) {
	for {
		start := time.Now()
		held, until := k.state()
		// A renewal must answer before the lease it renews runs out.
		cctx, cancel := context.WithTimeout(ctx, k.ttl/3)
		if held {
			cctx, cancel = context.WithDeadline(ctx, until)
		}
		ok, err := k.acquire(cctx, k.ttl)
		cancel()
		switch {
		case err == nil && ok:
			k.hold(ctx, start.Add(k.ttl))
		default:
			if err != nil && ctx.Err() == nil {
				onErr(err)
			}
			k.drop()
		}
		wait := k.poll
		if ok && err == nil {
			wait = k.ttl / 3
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			k.drop()
			return
		case <-t.C:
		}
	}
}

func (k *leaseKeeper) state() (bool, time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.lead != nil, k.until
}

func (k *leaseKeeper) hold(parent context.Context, until time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.lead == nil {
		k.lead, k.cancel = context.WithCancel(parent)
		k.gen++
		select {
		case k.wake <- struct{}{}:
		default:
		}
	}
	k.until = until
	if k.timer != nil {
		k.timer.Stop()
	}
	k.timer = time.AfterFunc(time.Until(until), k.expire)
}

// expire ends the leadership when the lease ran out unrenewed.
func (k *leaseKeeper) expire() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !time.Now().Before(k.until) {
		k.dropLocked()
	}
}

func (k *leaseKeeper) drop() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.dropLocked()
}

func (k *leaseKeeper) dropLocked() {
	if k.timer != nil {
		k.timer.Stop()
		k.timer = nil
	}
	if k.cancel != nil {
		k.cancel()
	}
	k.lead, k.cancel = nil, nil
}

// current returns the leadership context and its generation while the
// lease is held, and false (cancelling it) once its time has run out
// unrenewed.
func (k *leaseKeeper) current() (context.Context, int, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.lead != nil && !time.Now().Before(k.until) {
		k.dropLocked()
	}
	return k.lead, k.gen, k.lead != nil
}
