package server

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane/client"
)

// TestGrafanaURLConfig: HETEROFLOW_GRAFANA_URL sets grafana_url, and a
// value that is not an http(s) URL is refused at load.
func TestGrafanaURLConfig(t *testing.T) {
	env := map[string]string{EnvGrafanaURL: "https://grafana.example.com/d/heteroflow-overview"}
	c, err := Load("", func(k string) string { return env[k] })
	require.NoError(t, err)
	require.Equal(t, env[EnvGrafanaURL], c.GrafanaURL)
	c.DataDir = t.TempDir()
	require.NoError(t, c.Validate())
	for _, bad := range []string{"grafana.example.com", "ftp://grafana", "http://"} {
		c.GrafanaURL = bad
		require.ErrorContains(t, c.Validate(), "grafana_url", bad)
	}
}

// TestLinksEndpoint: the console reads the configured Grafana URL from
// GET /api/v1/settings/links (any signed-in role; anonymous is refused),
// and an empty one when none is configured.
func TestLinksEndpoint(t *testing.T) {
	for _, want := range []string{"http://grafana.example.com:3000", ""} {
		cfg := Defaults()
		cfg.APIAddr, cfg.ConsoleAddr, cfg.DataDir, cfg.GrafanaURL = "127.0.0.1:0", "", t.TempDir(), want
		env := map[string]string{EnvAdminPassword: "Links-Pass-123"}
		s, err := New(t.Context(), cfg, Options{Logger: slog.New(slog.DiscardHandler), Stderr: io.Discard,
			Getenv: func(k string) string { return env[k] }, Version: "links"})
		require.NoError(t, err)
		require.NoError(t, s.Start())
		base := "http://" + s.APIAddr()
		c, err := client.New(base, nil)
		require.NoError(t, err)
		cr, err := c.Login(t.Context(), BootstrapAdmin, "Links-Pass-123")
		require.NoError(t, err)

		get := func(token string) (int, []byte) {
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+"/api/v1/settings/links", nil)
			require.NoError(t, err)
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			res, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer res.Body.Close()
			b, err := io.ReadAll(res.Body)
			require.NoError(t, err)
			return res.StatusCode, b
		}
		code, _ := get("")
		require.Equal(t, http.StatusUnauthorized, code)
		code, body := get(cr.AccessToken)
		require.Equal(t, http.StatusOK, code, string(body))
		var out struct {
			GrafanaURL *string `json:"grafana_url"`
		}
		require.NoError(t, json.Unmarshal(body, &out))
		require.NotNil(t, out.GrafanaURL, string(body))
		require.Equal(t, want, *out.GrafanaURL)

		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		require.NoError(t, s.Shutdown(ctx))
		cancel()
	}
}
