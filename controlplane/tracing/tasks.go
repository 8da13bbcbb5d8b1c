package tracing

import (
	"context"
	"sync"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"
)

// Tracer is the control plane's tracer (from the global provider, looked up
// per use so a provider installed after start is honoured).
func Tracer() trace.Tracer { return otel.Tracer("github.com/heteroflow/heteroflow/controlplane") }

// maxRemembered bounds Tasks: a task that is never placed must not keep
// its entry forever (the oldest entries go first).
const maxRemembered = 10000

// Registry remembers, per task id, the span the task's next step continues.
type Registry struct {
	mu    sync.Mutex
	spans map[int64]trace.SpanContext
	order []int64 // insertion order, for the bound
}

// Tasks is the process's registry. A server process has one control plane.
var Tasks = &Registry{}

// Remember records ctx's span as where task id's trace continues; a
// context without a valid span (tracing off) records nothing.
func (r *Registry) Remember(ctx context.Context, id int64) {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.spans == nil {
		r.spans = map[int64]trace.SpanContext{}
	}
	if _, ok := r.spans[id]; !ok {
		r.order = append(r.order, id)
	}
	r.spans[id] = sc
	for len(r.spans) > maxRemembered {
		delete(r.spans, r.order[0])
		r.order = r.order[1:]
	}
}

// Continue returns ctx carrying task id's remembered span as parent (ctx
// unchanged when nothing is remembered).
func (r *Registry) Continue(ctx context.Context, id int64) context.Context {
	r.mu.Lock()
	sc, ok := r.spans[id]
	r.mu.Unlock()
	if !ok {
		return ctx
	}
	return trace.ContextWithRemoteSpanContext(ctx, sc)
}

// Take is Continue that also forgets the task: its path's last step.
func (r *Registry) Take(ctx context.Context, id int64) (context.Context, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sc, ok := r.spans[id]
	if !ok {
		return ctx, false
	}
	delete(r.spans, id)
	for i, v := range r.order {
		if v == id {
			r.order = append(r.order[:i], r.order[i+1:]...)
			break
		}
	}
	return trace.ContextWithRemoteSpanContext(ctx, sc), true
}
