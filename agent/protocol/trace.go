package protocol

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// traceContext is the W3C Trace Context propagator: a task's trace crosses
// from the server to its agent as a traceparent string in the assignment
// (TaskSpec.TraceParent) and back in heartbeats (RunningTask.TraceParent).
var traceContext = propagation.TraceContext{}

// TraceParent is the W3C traceparent of ctx's span, "" when ctx carries
// none (tracing off).
func TraceParent(ctx context.Context) string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ""
	}
	c := propagation.MapCarrier{}
	traceContext.Inject(ctx, c)
	return c.Get("traceparent")
}

// WithTraceParent returns ctx continuing the trace traceparent names; ctx
// unchanged for "" or a malformed value.
func WithTraceParent(ctx context.Context, traceparent string) context.Context {
	if traceparent == "" {
		return ctx
	}
	return traceContext.Extract(ctx, propagation.MapCarrier{"traceparent": traceparent})
}
