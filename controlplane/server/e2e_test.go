package server

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane/client"
	"github.com/heteroflow/heteroflow/controlplane/httpapi"
)

// startServer runs the real wiring on random ports.
func startServer(t *testing.T, dsn string, env map[string]string) (*Server, *bytes.Buffer) {
	t.Helper()
	cfg := Defaults()
	cfg.APIAddr, cfg.ConsoleAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.DataDir = t.TempDir()
	cfg.DB = dsn
	var stderr bytes.Buffer
	s, err := New(t.Context(), cfg, Options{Logger: slog.New(slog.DiscardHandler), Stderr: &stderr,
		Getenv: func(k string) string { return env[k] }, Version: "e2e"})
	require.NoError(t, err)
	require.NoError(t, s.Start())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, s.Shutdown(ctx))
	})
	return s, &stderr
}

// runE2E: health 200, admin login, create + cancel a task, both audited.
func runE2E(t *testing.T, dsn string) {
	s, stderr := startServer(t, dsn, nil)
	// No HETEROFLOW_ADMIN_PASSWORD: a generated password is printed once.
	m := regexp.MustCompile(`password: (\S+)`).FindStringSubmatch(stderr.String())
	require.NotNil(t, m, stderr.String())

	ctx := t.Context()
	for _, base := range []string{"http://" + s.APIAddr(), "http://" + s.ConsoleAddr()} {
		c, err := client.New(base, nil)
		require.NoError(t, err)
		h, err := c.Health(ctx)
		require.NoError(t, err)
		require.Equal(t, "ok", h.Store)
	}
	c, err := client.New("http://"+s.APIAddr(), nil)
	require.NoError(t, err)
	_, err = c.Login(ctx, BootstrapAdmin, m[1])
	require.NoError(t, err)
	task, err := c.SubmitTask(ctx, httpapi.TaskSpecJSON{Name: "e2e", Command: []string{"sleep", "60"}})
	require.NoError(t, err)
	cancelled, err := c.CancelTask(ctx, task.ID)
	require.NoError(t, err)
	require.Equal(t, "cancelled", string(cancelled.State))

	// Audit writes are asynchronous: poll briefly.
	want := map[string]bool{"auth.login": false, "task.create": false, "task.cancel": false}
	require.Eventually(t, func() bool {
		l, err := c.ListAudit(ctx, url.Values{"actor": {BootstrapAdmin}, "limit": {"100"}})
		require.NoError(t, err)
		for _, e := range l.Items {
			if _, ok := want[e.Action]; ok && e.Result == "ok" {
				want[e.Action] = true
			}
		}
		return want["auth.login"] && want["task.create"] && want["task.cancel"]
	}, 10*time.Second, 50*time.Millisecond, "%v", want)

	// /metrics carries the API's request metrics.
	res, err := http.Get("http://" + s.APIAddr() + "/metrics")
	require.NoError(t, err)
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	require.Contains(t, string(b), `heteroflow_http_requests_total{code="201",method="POST",route="/api/v1/tasks"} 1`)
}

func TestEndToEndSQLite(t *testing.T) { runE2E(t, "") }

func TestEndToEndPostgres(t *testing.T) {
	dsn := os.Getenv("HETEROFLOW_TEST_PG_DSN")
	if dsn == "" {
		t.Skip("HETEROFLOW_TEST_PG_DSN not set")
	}
	runE2E(t, freshPostgres(t, dsn))
}

func TestBootstrapAdminFromEnv(t *testing.T) {
	s, stderr := startServer(t, "", map[string]string{EnvAdminPassword: "Env-Root-Pass-1"})
	require.Empty(t, stderr.String(), "no generated password when one is configured")
	c, err := client.New("http://"+s.APIAddr(), nil)
	require.NoError(t, err)
	_, err = c.Login(t.Context(), BootstrapAdmin, "Env-Root-Pass-1")
	require.NoError(t, err)

	// A policy-breaking password is refused with the reason.
	cfg := Defaults()
	cfg.DataDir = t.TempDir()
	_, err = New(t.Context(), cfg, Options{Logger: slog.New(slog.DiscardHandler), Stderr: io.Discard,
		Getenv: func(k string) string { return map[string]string{EnvAdminPassword: "short"}[k] }})
	require.ErrorContains(t, err, "HETEROFLOW_ADMIN_PASSWORD: invalid input: password must be at least 10")
}

func TestConsoleListener(t *testing.T) {
	s, _ := startServer(t, "", map[string]string{EnvAdminPassword: "Env-Root-Pass-1"})
	res, err := http.Get("http://" + s.ConsoleAddr() + "/tasks/42")
	require.NoError(t, err)
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	require.Contains(t, res.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'")
	require.Equal(t, "nosniff", res.Header.Get("X-Content-Type-Options"))
	if strings.Contains(string(b), "make build") {
		require.Equal(t, http.StatusServiceUnavailable, res.StatusCode)
		require.Contains(t, string(b), "控制台尚未构建")
	} else {
		require.Equal(t, http.StatusOK, res.StatusCode)
		require.Contains(t, strings.ToLower(string(b)), "<!doctype html>")
	}
	res, err = http.Get("http://" + s.ConsoleAddr() + "/api/v1/auth/me")
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusUnauthorized, res.StatusCode, "API paths are forwarded")
}
