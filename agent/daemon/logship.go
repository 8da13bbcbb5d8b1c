package daemon

import (
	"context"

	"github.com/heteroflow/heteroflow/agent/protocol"
	"github.com/heteroflow/heteroflow/agent/runner"
)

// chunkBytes bounds one shipped chunk (the server accepts up to 256 KiB).
const chunkBytes = 64 << 10

// shipLogs sends what the task wrote since the last successful shipment.
// Offsets make resends idempotent; a failure is retried on the next tick.
func (a *Agent) shipLogs(ctx context.Context, t *task) {
	t.shipMu.Lock()
	defer t.shipMu.Unlock()
	for _, stream := range []string{"stdout", "stderr"} {
		for i := 0; i < 16; i++ { // at most 1 MiB per stream per tick
			off := t.shipped[stream]
			data, start, next, err := runner.ReadLog(t.h.LogDir(), stream, off, chunkBytes)
			if err != nil || len(data) == 0 {
				break
			}
			c := protocol.LogChunk{TaskID: t.spec.TaskID, Attempt: t.spec.Attempt, Stream: stream, Offset: start, Data: string(data)}
			if err := a.cl.do(ctx, "POST", "/api/v1/agents/logs", protocol.LogBatch{Chunks: []protocol.LogChunk{c}}, nil); err != nil {
				if ctx.Err() == nil {
					a.cfg.Logger.Debug("log shipping failed; will retry", "task", t.spec.TaskID, "err", err)
				}
				return
			}
			t.shipped[stream] = next
		}
	}
}
