package plugins

import (
	"context"
	"log/slog"
	"sync"

	"github.com/heteroflow/heteroflow/scheduler/framework"
)

// Audit records every decision with its scores: to the injected logger at
// debug level, and to a sink (the server's audit log) when one is set.
type Audit struct {
	log  *slog.Logger
	mu   sync.RWMutex
	sink func(context.Context, *framework.Decision)
}

var _ framework.AuditPlugin = (*Audit)(nil)

// NewAudit builds the plugin (no args).
func NewAudit(args framework.Args, h framework.Handle) (framework.Plugin, error) {
	return &Audit{log: h.Logger()}, args.Decode(&struct{}{})
}

// Name implements framework.Plugin.
func (*Audit) Name() string { return NameAudit }

// SetSink routes decisions to fn (nil to stop).
func (p *Audit) SetSink(fn func(context.Context, *framework.Decision)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sink = fn
}

// Audit implements framework.AuditPlugin.
func (p *Audit) Audit(ctx context.Context, d *framework.Decision) {
	if p.log.Enabled(ctx, slog.LevelDebug) {
		attrs := []any{"task", d.Request.ID, "status", d.Status}
		if d.Placement != nil {
			attrs = append(attrs, "node", d.Placement.Node)
		}
		if len(d.Candidates) > 0 {
			attrs = append(attrs, "score", d.Candidates[0].Total, "scores", d.Candidates[0].Scores)
		}
		if d.Diagnosis != nil {
			attrs = append(attrs, "why", d.Diagnosis.Summary())
		}
		p.log.DebugContext(ctx, "scheduling decision", attrs...)
	}
	p.mu.RLock()
	sink := p.sink
	p.mu.RUnlock()
	if sink != nil {
		sink(ctx, d)
	}
}
