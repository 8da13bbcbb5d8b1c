package storeutil

import (
	"context"
	"fmt"
	"sync"

	"github.com/heteroflow/heteroflow/controlplane"
)

// GroupCommit turns concurrent single-item writes into batched ones. Most of
// a durable commit's cost is fixed (a WAL flush, a round trip, touching the
// same index pages), so a worker takes every request waiting at that moment
// (up to the batch limit) and hands them to one write call — one
// transaction. An idle store still writes each item alone without waiting:
// batches only form while a previous write is in flight, so the batch size
// follows the load by itself.
//
// If a batch fails, each item is written again in its own call so that one
// bad item (a missing foreign key, an invalid value) fails only its own
// caller. write must therefore be all-or-nothing: a failed call leaves no
// trace in the database.
type GroupCommit[T any] struct {
	write    func(ctx context.Context, items []T) error
	maxBatch int
	reqs     chan *groupReq[T]
	closed   chan struct{} // closed by Close: no new requests
	stopped  chan struct{} // closed when every worker has exited
	once     sync.Once
}

type groupReq[T any] struct {
	ctx  context.Context
	item T
	done chan error // buffered(1): a worker never blocks on a caller
}

// NewGroupCommit starts workers goroutines (at least one) that call write
// with batches of at most maxBatch items. One worker suits a store with a
// single writer connection; a networked database benefits from a second, so
// that one batch is formed while the previous one waits for its commit.
func NewGroupCommit[T any](maxBatch, workers int, write func(ctx context.Context, items []T) error) *GroupCommit[T] {
	maxBatch, workers = max(1, maxBatch), max(1, workers)
	g := &GroupCommit[T]{write: write, maxBatch: maxBatch, reqs: make(chan *groupReq[T], maxBatch),
		closed: make(chan struct{}), stopped: make(chan struct{})}
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g.work()
		}()
	}
	go func() {
		wg.Wait()
		close(g.stopped)
	}()
	return g
}

// Do writes item, batched with whatever else is waiting, and returns this
// item's own result. A caller whose ctx ends before its item is taken is not
// written; one whose ctx ends while its batch is in flight gets ctx.Err()
// although the item may still be committed (as with any commit that races a
// cancellation). ErrUnavailable once Close has been called.
func (g *GroupCommit[T]) Do(ctx context.Context, item T) error {
	r := &groupReq[T]{ctx: ctx, item: item, done: make(chan error, 1)}
	select {
	case <-g.closed:
		return fmt.Errorf("%w: store closed", controlplane.ErrUnavailable)
	default:
	}
	select {
	case g.reqs <- r:
	case <-g.closed:
		return fmt.Errorf("%w: store closed", controlplane.ErrUnavailable)
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-r.done:
		return err
	case <-g.stopped: // the workers exited without taking r
		select {
		case err := <-r.done: // …or took it just before exiting
			return err
		default:
			return fmt.Errorf("%w: store closed", controlplane.ErrUnavailable)
		}
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Queued is the number of requests waiting for a worker.
func (g *GroupCommit[T]) Queued() int { return len(g.reqs) }

// Close stops accepting requests and waits for in-flight batches to finish,
// so the caller may close the database afterwards. Safe to call twice.
func (g *GroupCommit[T]) Close() {
	g.once.Do(func() { close(g.closed) })
	<-g.stopped
}

func (g *GroupCommit[T]) work() {
	batch := make([]*groupReq[T], 0, g.maxBatch)
	for {
		select {
		case <-g.closed:
			return
		default:
		}
		select {
		case r := <-g.reqs:
			batch = append(batch[:0], r)
		fill:
			for len(batch) < g.maxBatch {
				select {
				case r := <-g.reqs:
					batch = append(batch, r)
				default:
					break fill
				}
			}
			g.commit(batch)
			clear(batch) // drop references to finished requests
		case <-g.closed:
			return
		}
	}
}

func (g *GroupCommit[T]) commit(batch []*groupReq[T]) {
	live := make([]*groupReq[T], 0, len(batch))
	items := make([]T, 0, len(batch))
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.done <- err // the caller gave up before its item was written
			continue
		}
		live = append(live, r)
		items = append(items, r.item)
	}
	if len(live) == 0 {
		return
	}
	if len(live) == 1 {
		live[0].done <- g.write(live[0].ctx, items)
		return
	}
	// The batch is bound to no caller's context: one caller giving up must
	// not roll back its neighbours.
	err := g.write(context.Background(), items)
	if err == nil {
		for _, r := range live {
			r.done <- nil
		}
		return
	}
	for i, r := range live {
		r.done <- g.write(r.ctx, items[i:i+1])
	}
}
