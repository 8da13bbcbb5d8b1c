package httpapi

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
)

// AuditBatcher is optionally implemented by a Store that can insert many
// audit rows in one transaction; the Auditor uses it when present.
type AuditBatcher interface {
	AppendAuditBatch(ctx context.Context, entries []*controlplane.AuditEntry) error
}

// Auditor writes audit entries off the request path. Record never drops:
// when the buffer is full it blocks the caller (back-pressure) rather than
// lose an entry. Workers write in batches, so under load one transaction
// carries many entries. Close drains everything recorded before it.
type Auditor struct {
	store   controlplane.Store
	batcher AuditBatcher
	log     *slog.Logger
	ch      chan *controlplane.AuditEntry
	wg      sync.WaitGroup

	mu      sync.Mutex
	cond    *sync.Cond
	pending int
	closed  bool
}

// AuditorOptions size the Auditor; zero values take defaults (4096, 2, 256).
type AuditorOptions struct {
	Buffer   int
	Workers  int
	MaxBatch int
}

// NewAuditor starts the writer goroutines.
func NewAuditor(store controlplane.Store, log *slog.Logger, o AuditorOptions) *Auditor {
	if o.Buffer <= 0 {
		o.Buffer = 4096
	}
	if o.Workers <= 0 {
		o.Workers = 2
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = 256
	}
	a := &Auditor{store: store, log: log, ch: make(chan *controlplane.AuditEntry, o.Buffer)}
	a.batcher, _ = store.(AuditBatcher)
	a.cond = sync.NewCond(&a.mu)
	for range o.Workers {
		a.wg.Add(1)
		go a.run(o.MaxBatch)
	}
	return a
}

// Record queues e. After Close it writes synchronously so late events
// (shutdown paths) are not lost either.
func (a *Auditor) Record(e *controlplane.AuditEntry) {
	if e.At.IsZero() {
		e.At = time.Now().UTC()
	}
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		a.write([]*controlplane.AuditEntry{e})
		return
	}
	a.pending++
	a.mu.Unlock()
	a.ch <- e
}

// Flush waits until every entry recorded before the call is stored.
func (a *Auditor) Flush(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		a.mu.Lock()
		for a.pending > 0 {
			a.cond.Wait()
		}
		a.mu.Unlock()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops accepting queued entries and waits for the queue to drain.
func (a *Auditor) Close() {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return
	}
	a.closed = true
	a.mu.Unlock()
	close(a.ch)
	a.wg.Wait()
}

func (a *Auditor) run(maxBatch int) {
	defer a.wg.Done()
	batch := make([]*controlplane.AuditEntry, 0, maxBatch)
	for e := range a.ch {
		batch = append(batch[:0], e)
	fill:
		for len(batch) < maxBatch {
			select {
			case e, ok := <-a.ch:
				if !ok {
					break fill
				}
				batch = append(batch, e)
			default:
				break fill
			}
		}
		a.write(batch)
		a.mu.Lock()
		a.pending -= len(batch)
		a.cond.Broadcast()
		a.mu.Unlock()
	}
}

// write stores a batch, retrying transient failures. An entry that still
// cannot be stored is logged in full at ERROR, so it survives in the
// server log rather than vanishing.
func (a *Auditor) write(batch []*controlplane.AuditEntry) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	backoff := 50 * time.Millisecond
	for attempt := 1; ; attempt++ {
		var err error
		batch, err = a.writeOnce(ctx, batch)
		if err == nil {
			return
		}
		if attempt == 5 || ctx.Err() != nil {
			for _, e := range batch {
				a.log.Error("audit entry not stored", "err", err, "at", e.At, "actor", e.Actor, "module", e.Module,
					"level", e.Level, "action", e.Action, "target", e.Target, "source_ip", e.SourceIP, "result", e.Result)
			}
			return
		}
		time.Sleep(backoff)
		backoff *= 2
	}
}

// writeOnce returns the entries still to write (all of them on a batch
// failure, the unwritten tail on a one-by-one failure).
func (a *Auditor) writeOnce(ctx context.Context, batch []*controlplane.AuditEntry) ([]*controlplane.AuditEntry, error) {
	if a.batcher != nil && len(batch) > 1 {
		if err := a.batcher.AppendAuditBatch(ctx, batch); err != nil {
			return batch, err
		}
		return nil, nil
	}
	for i, e := range batch {
		if err := a.store.AppendAudit(ctx, e); err != nil {
			return batch[i:], err
		}
	}
	return nil, nil
}
