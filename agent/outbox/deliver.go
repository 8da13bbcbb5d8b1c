package outbox

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/heteroflow/heteroflow/agent/protocol"
)

// SendFunc delivers a batch and returns the highest sequence the server has
// applied (it may be below the batch's last one when the server stopped
// early).
type SendFunc func(ctx context.Context, batch []protocol.StatusUpdate) (acked uint64, err error)

// Backoff is an exponential backoff with full jitter.
type Backoff struct {
	Min, Max time.Duration
	n        int
}

// Next returns the next delay and grows the window.
func (b *Backoff) Next() time.Duration {
	if b.Min <= 0 {
		b.Min = 200 * time.Millisecond
	}
	if b.Max < b.Min {
		b.Max = 30 * time.Second
	}
	d := b.Min << min(b.n, 20)
	if d > b.Max || d <= 0 {
		d = b.Max
	}
	b.n++
	// Half fixed, half random: never zero, and a fleet does not retry in step.
	return d/2 + rand.N(d/2+1)
}

// Reset goes back to the shortest delay after a success.
func (b *Backoff) Reset() { b.n = 0 }

// Run delivers pending updates in order until ctx ends. batch bounds one
// request; while sends fail it waits per backoff and retries the same batch.
func (o *Outbox) Run(ctx context.Context, send SendFunc, batch int, backoff Backoff, log *slog.Logger) {
	if log == nil {
		log = slog.Default()
	}
	for {
		items := o.Pending(batch)
		if len(items) == 0 {
			select {
			case <-ctx.Done():
				return
			case <-o.notify:
				continue
			}
		}
		acked, err := send(ctx, items)
		if err == nil && acked >= items[0].Seq {
			backoff.Reset()
			if aerr := o.Ack(min(acked, items[len(items)-1].Seq)); aerr != nil {
				log.Error("outbox ack failed", "err", aerr)
			}
			continue
		}
		if err == nil {
			// The server applied nothing of this batch: treat like a failure
			// so a misbehaving server cannot make the agent spin.
			log.Warn("outbox batch not acknowledged", "first", items[0].Seq, "acked", acked)
		} else if ctx.Err() == nil {
			log.Warn("outbox delivery failed", "pending", o.Len(), "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff.Next()):
		}
	}
}
