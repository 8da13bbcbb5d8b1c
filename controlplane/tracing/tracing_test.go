package tracing

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// TestRegistryOff: without a span (tracing off) nothing is remembered.
func TestRegistryOff(t *testing.T) {
	var r Registry
	r.Remember(context.Background(), 1)
	require.Empty(t, r.spans)
	ctx := r.Continue(context.Background(), 1)
	require.False(t, trace.SpanContextFromContext(ctx).IsValid())
	_, ok := r.Take(context.Background(), 1)
	require.False(t, ok)
}

// TestRegistryContinueTake: a remembered span is the parent of the next
// step; Take hands it out once.
func TestRegistryContinueTake(t *testing.T) {
	tp := sdktrace.NewTracerProvider()
	ctx, span := tp.Tracer("t").Start(context.Background(), "request")
	defer span.End()
	var r Registry
	r.Remember(ctx, 7)
	got := trace.SpanContextFromContext(r.Continue(context.Background(), 7))
	require.Equal(t, span.SpanContext().SpanID(), got.SpanID())
	_, ok := r.Take(context.Background(), 7)
	require.True(t, ok)
	_, ok = r.Take(context.Background(), 7)
	require.False(t, ok, "taken once")
	for i := range int64(maxRemembered + 10) {
		r.Remember(ctx, i)
	}
	require.Len(t, r.spans, maxRemembered)
	_, ok = r.Take(context.Background(), 0)
	require.False(t, ok, "the oldest entries go first")
}

// TestHandler: a pass-through while off; once installed, one server span
// per request named by the chi route, continuing a caller's traceparent.
func TestHandler(t *testing.T) {
	mux := chi.NewRouter()
	var seen trace.SpanContext
	mux.Get("/api/v1/tasks/{id}", func(w http.ResponseWriter, r *http.Request) {
		seen = trace.SpanContextFromContext(r.Context())
		w.WriteHeader(http.StatusTeapot)
	})
	h := Handler(mux)

	Install(nil)
	res := httptest.NewRecorder()
	h.ServeHTTP(res, httptest.NewRequest(http.MethodGet, "/api/v1/tasks/3", nil))
	require.Equal(t, http.StatusTeapot, res.Code)
	require.False(t, seen.IsValid(), "no span while tracing is off")

	rec := tracetest.NewSpanRecorder()
	Install(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	t.Cleanup(func() { Install(nil) })
	req := httptest.NewRequest(http.MethodGet, "/api/v1/tasks/3", nil)
	req.Header.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	h.ServeHTTP(httptest.NewRecorder(), req)
	require.True(t, seen.IsValid())
	spans := rec.Ended()
	require.Len(t, spans, 1)
	require.Equal(t, "HTTP GET /api/v1/tasks/{id}", spans[0].Name())
	require.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", spans[0].SpanContext().TraceID().String())
	require.Equal(t, "00f067aa0ba902b7", spans[0].Parent().SpanID().String())
}
