package tracing

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-chi/chi/v5"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// benchRequest serves one API request through Handler with tracing off or
// on (an in-memory recorder standing in for the OTLP exporter), plus the
// registry calls a task submission and its first heartbeat make.
func benchRequest(b *testing.B, wrap, on bool) {
	mux := chi.NewRouter()
	mux.Post("/api/v1/tasks", func(w http.ResponseWriter, r *http.Request) {
		Tasks.Remember(r.Context(), 1)
		w.WriteHeader(http.StatusCreated)
	})
	var h http.Handler = mux
	if wrap {
		h = Handler(mux)
	}
	Install(nil)
	if on {
		rec := tracetest.NewSpanRecorder()
		Install(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	}
	b.Cleanup(func() { Install(nil) })
	req := httptest.NewRequest(http.MethodPost, "/api/v1/tasks", nil)
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(httptest.NewRecorder(), req)
		_, _ = Tasks.Take(context.Background(), 1)
	}
}

// BenchmarkRequestNoHandler is the baseline: the router alone.
func BenchmarkRequestNoHandler(b *testing.B)  { benchRequest(b, false, false) }
func BenchmarkRequestTracingOff(b *testing.B) { benchRequest(b, true, false) }
func BenchmarkRequestTracingOn(b *testing.B)  { benchRequest(b, true, true) }
