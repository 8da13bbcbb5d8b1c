package tracing

import (
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

var enabled atomic.Bool

// Install makes tp the global tracer provider (W3C trace context as the
// propagator) and turns the HTTP spans on. Without it, every span of this
// package is the global no-op. Install(nil) turns tracing off again.
func Install(tp trace.TracerProvider) {
	if tp == nil {
		enabled.Store(false)
		otel.SetTracerProvider(noop.NewTracerProvider())
		return
	}
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	enabled.Store(true)
}

// Enabled reports whether Install ran.
func Enabled() bool { return enabled.Load() }
