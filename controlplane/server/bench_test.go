package server

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane/client"
	"github.com/heteroflow/heteroflow/controlplane/httpapi"
	"github.com/heteroflow/heteroflow/controlplane/postgres/pgtest"
)

// benchServer starts the real server wiring on a random port and returns
// its URL and an API key of role user.
func benchServer(b *testing.B, dsn string) (string, string) {
	b.Helper()
	cfg := Defaults()
	cfg.APIAddr, cfg.ConsoleAddr, cfg.DataDir, cfg.DB = "127.0.0.1:0", "", b.TempDir(), dsn
	s, err := New(context.Background(), cfg, Options{Logger: slog.New(slog.DiscardHandler), Stderr: &bytes.Buffer{},
		Getenv: func(k string) string { return map[string]string{EnvAdminPassword: "Bench-Pass-123"}[k] }})
	require.NoError(b, err)
	require.NoError(b, s.Start())
	b.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	base := "http://" + s.APIAddr()
	c, err := client.New(base, nil)
	require.NoError(b, err)
	_, err = c.Login(context.Background(), BootstrapAdmin, "Bench-Pass-123")
	require.NoError(b, err)
	var k httpapi.CreatedAPIKeyJSON
	require.NoError(b, c.Do(context.Background(), http.MethodPost, "/api/v1/apikeys", map[string]string{"name": "bench", "role": "user"}, &k))
	return base, k.Key
}

// benchConcurrency is the number of concurrent HTTP clients; override with
// HETEROFLOW_BENCH_CONCURRENCY.
func benchConcurrency() int {
	if v := os.Getenv("HETEROFLOW_BENCH_CONCURRENCY"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			return n
		}
	}
	return 16
}

func runSubmitBench(b *testing.B, dsn string) {
	base, key := benchServer(b, dsn)
	b.ResetTimer()
	r, err := client.BenchSubmitN(context.Background(), base, key, benchConcurrency(), b.N)
	b.StopTimer()
	require.NoError(b, err)
	require.Zero(b, r.Errors, r.FirstError)
	b.ReportMetric(r.PerSecond, "submits/s")
	b.ReportMetric(float64(r.P50)/float64(time.Millisecond), "p50-ms")
	b.ReportMetric(float64(r.P99)/float64(time.Millisecond), "p99-ms")
}

// BenchmarkSubmitSQLite: task submissions through the HTTP API (API-key
// auth, validation, store transaction, audit) on the embedded SQLite store.
func BenchmarkSubmitSQLite(b *testing.B) { runSubmitBench(b, "") }

// BenchmarkSubmitPostgres: the same on PostgreSQL (HETEROFLOW_TEST_PG_DSN).
func BenchmarkSubmitPostgres(b *testing.B) { runSubmitBench(b, pgtest.Schema(b)) }
