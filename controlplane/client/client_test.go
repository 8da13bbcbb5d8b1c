package client_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane/apitypes"
	"github.com/heteroflow/heteroflow/controlplane/client"
	"github.com/heteroflow/heteroflow/controlplane/server"
)

func startServer(t *testing.T) string {
	t.Helper()
	cfg := server.Defaults()
	cfg.APIAddr, cfg.ConsoleAddr, cfg.DataDir = "127.0.0.1:0", "", t.TempDir()
	s, err := server.New(t.Context(), cfg, server.Options{Logger: slog.New(slog.DiscardHandler), Stderr: &bytes.Buffer{},
		Getenv: func(k string) string { return map[string]string{server.EnvAdminPassword: "Client-Pass-123"}[k] }})
	require.NoError(t, err)
	require.NoError(t, s.Start())
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	return "http://" + s.APIAddr()
}

func TestLoginSaveAndAutoRefresh(t *testing.T) {
	base := startServer(t)
	ctx := t.Context()
	c, err := client.New(base, nil)
	require.NoError(t, err)
	_, err = c.Login(ctx, "admin", "wrong-Password-1")
	var ae *client.Error
	require.ErrorAs(t, err, &ae)
	require.Equal(t, 401, ae.Status)
	require.Equal(t, "unauthenticated", ae.Code)

	cr, err := c.Login(ctx, "admin", "Client-Pass-123")
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "heteroflow", "credentials.json")
	require.NoError(t, client.SaveCredentials(path, cr))
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())

	// A client whose access token is expired refreshes, retries and saves
	// the rotated refresh token.
	loaded, err := client.LoadCredentials(path)
	require.NoError(t, err)
	loaded.ExpiresAt = time.Now().Add(-time.Minute)
	c2, err := client.New(base, nil)
	require.NoError(t, err)
	c2.WithCredentials(loaded, path)
	task, err := c2.SubmitTask(ctx, apitypes.TaskSpecJSON{Name: "cli", Command: []string{"true"}})
	require.NoError(t, err)
	require.Equal(t, "admin", task.Owner)
	saved, err := client.LoadCredentials(path)
	require.NoError(t, err)
	require.NotEqual(t, cr.RefreshToken, saved.RefreshToken)

	// A bad access token (401) also triggers one refresh.
	saved.AccessToken = "garbage"
	c3, err := client.New(base, nil)
	require.NoError(t, err)
	c3.WithCredentials(saved, "")
	_, err = c3.GetTask(ctx, task.ID)
	require.NoError(t, err)

	_, err = client.LoadCredentials(filepath.Join(t.TempDir(), "none.json"))
	require.ErrorIs(t, err, client.ErrNotLoggedIn)
}

func TestBenchSubmitCountsEveryRequest(t *testing.T) {
	base := startServer(t)
	c, err := client.New(base, nil)
	require.NoError(t, err)
	_, err = c.Login(t.Context(), "admin", "Client-Pass-123")
	require.NoError(t, err)
	var k apitypes.CreatedAPIKeyJSON
	require.NoError(t, c.Do(t.Context(), "POST", "/api/v1/apikeys", map[string]string{"name": "b", "role": "user"}, &k))
	r, err := client.BenchSubmitN(t.Context(), base, k.Key, 4, 40)
	require.NoError(t, err)
	require.Equal(t, 40, r.Submitted)
	require.Zero(t, r.Errors)
	require.LessOrEqual(t, r.P50, r.P99)
	l, err := c.ListTasks(t.Context(), map[string][]string{"label": {"bench=submit"}})
	require.NoError(t, err)
	require.Equal(t, 41, l.Total, "40 measured + 1 warm-up")

	_, err = client.BenchSubmitN(t.Context(), base, "hf_000000000000_bad", 1, 1)
	require.ErrorContains(t, err, "first submission failed")
}
