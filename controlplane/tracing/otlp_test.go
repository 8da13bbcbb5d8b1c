package tracing

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStartOTLPOff: without an OTLP endpoint nothing is installed.
func TestStartOTLPOff(t *testing.T) {
	t.Setenv(envOTLPEndpoint, "")
	t.Setenv(envOTLPTracesEndpoint, "")
	Install(nil)
	stop, err := StartOTLP(context.Background(), "heteroflow-test", "dev")
	require.NoError(t, err)
	require.NoError(t, stop(context.Background()))
	require.False(t, Enabled())

	t.Setenv(envOTLPEndpoint, "http://127.0.0.1:1")
	t.Setenv(envTracesExporter, "none")
	_, err = StartOTLP(context.Background(), "heteroflow-test", "dev")
	require.NoError(t, err)
	require.False(t, Enabled(), `OTEL_TRACES_EXPORTER=none keeps tracing off`)
}

// TestStartOTLPExports: with OTEL_EXPORTER_OTLP_ENDPOINT set, spans reach
// an OTLP/HTTP receiver at <endpoint>/v1/traces when the exporter stops.
func TestStartOTLPExports(t *testing.T) {
	var mu sync.Mutex
	var got []string
	var body int
	rx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type"))
		body += len(b)
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	defer rx.Close()
	t.Setenv(envOTLPEndpoint, rx.URL)
	t.Setenv(envTracesExporter, "")
	t.Cleanup(func() { Install(nil) })

	stop, err := StartOTLP(context.Background(), "heteroflow-test", "dev")
	require.NoError(t, err)
	require.True(t, Enabled())
	_, span := Tracer().Start(context.Background(), "scheduling.cycle")
	span.End()
	require.NoError(t, stop(context.Background())) // flushes the batch
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []string{"POST /v1/traces application/x-protobuf"}, got)
	require.Positive(t, body)
}
