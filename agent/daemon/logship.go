package daemon

import (
	"context"
	"time"

	"github.com/heteroflow/heteroflow/agent/outbox"

	"github.com/heteroflow/heteroflow/agent/protocol"
	"github.com/heteroflow/heteroflow/agent/runner"
	"github.com/heteroflow/heteroflow/agent/state"
)

// chunkBytes bounds one shipped chunk (the server accepts up to 256 KiB).
const chunkBytes = 64 << 10

// shipLogs sends what the task wrote since the last successful shipment
// and reports whether everything written so far is shipped. Offsets make
// resends idempotent; a failure is retried on the next call.
func (a *Agent) shipLogs(ctx context.Context, t *task) bool {
	t.shipMu.Lock()
	defer t.shipMu.Unlock()
	complete := true
	for _, stream := range []string{"stdout", "stderr"} {
		for i := 0; i < 16; i++ { // at most 1 MiB per stream per call
			off := t.shipped[stream]
			data, start, next, err := runner.ReadLog(t.h.LogDir(), stream, off, chunkBytes)
			if err != nil {
				complete = false
				break
			}
			if len(data) == 0 {
				break
			}
			c := protocol.LogChunk{TaskID: t.spec.TaskID, Attempt: t.spec.Attempt, Stream: stream, Offset: start, Data: string(data)}
			if err := a.cl.do(ctx, "POST", "/api/v1/agents/logs", protocol.LogBatch{Chunks: []protocol.LogChunk{c}}, nil); err != nil {
				if ctx.Err() == nil {
					a.cfg.Logger.Debug("log shipping failed; will retry", "task", t.spec.TaskID, "err", err)
				}
				return false
			}
			t.shipped[stream] = next
			if i == 15 {
				complete = false
			}
		}
	}
	return complete
}

// drainLogs keeps shipping a finished task's logs until all are on the
// server (the server may be down when the task ends), for up to an hour;
// the files stay on the node either way.
func (a *Agent) drainLogs(ctx context.Context, t *task) {
	backoff := outbox.Backoff{Min: 500 * time.Millisecond, Max: 30 * time.Second}
	deadline := time.Now().Add(time.Hour)
	for !a.shipLogs(ctx, t) && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff.Next()):
		}
	}
}

// shipOrphanLogs ships what a task that ended while the agent was down
// wrote, in the background, from its log files.
func (a *Agent) shipOrphanLogs(ctx context.Context, r state.Record) {
	h := runner.Finished(protocol.TaskSpec{TaskID: r.TaskID, Attempt: r.Attempt}, r.LogDir)
	go a.drainLogs(ctx, &task{spec: h.Spec(), h: h, shipped: map[string]int64{}})
}
