package server

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestQueryTimeoutBelowWriteTimeout: a query timeout at or past the API's
// write timeout is refused at load, the defaults are below it.
func TestQueryTimeoutBelowWriteTimeout(t *testing.T) {
	cfg := Defaults()
	require.NoError(t, cfg.Validate())
	require.Less(t, cfg.metricsConfig().Query.Timeout, APIWriteTimeout)
	cfg.Metrics.Query.Timeout = APIWriteTimeout
	err := cfg.Validate()
	require.Error(t, err)
	require.Contains(t, err.Error(), "metrics.query.timeout")
}

// startConfigured runs the real wiring with cfg until the test ends.
func startConfigured(t *testing.T, cfg Config, env map[string]string) *Server {
	t.Helper()
	s, err := New(t.Context(), cfg, Options{Logger: slog.New(slog.DiscardHandler), Stderr: io.Discard,
		Getenv: func(k string) string { return env[k] }, Version: "test"})
	require.NoError(t, err)
	require.NoError(t, s.Start())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, s.Shutdown(ctx))
	})
	return s
}
