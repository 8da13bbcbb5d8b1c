package server

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane/apitypes"
	"github.com/heteroflow/heteroflow/controlplane/client"
	"github.com/heteroflow/heteroflow/controlplane/metricstore"
	"github.com/heteroflow/heteroflow/controlplane/postgres/pgtest"
)

func haConfig(t *testing.T, dsn string) Config {
	cfg := Defaults()
	cfg.APIAddr, cfg.ConsoleAddr = "127.0.0.1:0", ""
	cfg.DataDir = t.TempDir()
	cfg.DB = dsn
	cfg.HA.Enabled = true
	cfg.Metrics.Mode = metricstore.ModeRemote
	// A sink that accepts every write: these tests are about the store.
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(sink.Close)
	cfg.Metrics.Remote.QueryURL = sink.URL
	cfg.Metrics.Remote.WriteURL = sink.URL + "/api/v1/write"
	return cfg
}

func newSecretKey(t *testing.T) string {
	b := make([]byte, 32)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return base64.StdEncoding.EncodeToString(b)
}

func TestHAConfigRefusesSingleMachineStores(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		edit  func(*Config)
		wants []string // each in the error; none = valid
	}{
		{"postgres and remote metrics", func(*Config) {}, nil},
		{"sqlite", func(c *Config) { c.DB = "" }, []string{"ha.enabled needs PostgreSQL", "高可用模式需要 PostgreSQL"}},
		{"sqlite file", func(c *Config) { c.DB = "sqlite:///tmp/x.db" }, []string{"SQLite is one file on one machine"}},
		{"embedded tsdb", func(c *Config) { c.Metrics.Mode = metricstore.ModeEmbedded },
			[]string{"ha.enabled needs metrics.mode: remote", "内置 TSDB", "docs/HA.md"}},
		{"lease too short", func(c *Config) { c.HA.LeaseTTL = Duration(100 * time.Millisecond) }, []string{"ha.lease_ttl"}},
		{"off keeps sqlite", func(c *Config) { c.HA.Enabled, c.DB, c.Metrics.Mode = false, "", metricstore.ModeEmbedded }, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := haConfig(t, "postgres://u@127.0.0.1:5432/db")
			tc.edit(&cfg)
			err := cfg.Validate()
			if tc.wants == nil {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			for _, w := range tc.wants {
				require.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestHASecretKeySources(t *testing.T) {
	t.Parallel()
	key := newSecretKey(t)
	h := HAConfig{Enabled: true}
	_, err := h.secretKey(func(string) string { return "" })
	require.ErrorContains(t, err, "openssl rand -base64 32")
	_, err = h.secretKey(func(string) string { return base64.StdEncoding.EncodeToString([]byte("short")) })
	require.ErrorContains(t, err, "at least 32 random bytes")
	got, err := h.secretKey(func(k string) string { return map[string]string{EnvSecretKey: key}[k] })
	require.NoError(t, err)
	require.Len(t, got, 32)
	h.SecretKeyFile = t.TempDir() + "/missing"
	_, err = h.secretKey(func(string) string { return "" })
	require.ErrorContains(t, err, "ha.secret_key_file")
}

// TestHAServersShareSecrets starts four HA servers at once on one fresh
// database: they settle on one signing key kept sealed in the database
// (never in a data directory), a session opened on one works on every
// other, and a server with another secret key refuses to start.
func TestHAServersShareSecrets(t *testing.T) {
	dsn := pgtest.Schema(t)
	key := newSecretKey(t)
	env := map[string]string{EnvSecretKey: key, EnvAdminPassword: "Ha-Test-Password-9x"}
	getenv := func(k string) string { return env[k] }
	const n = 3
	srvs := make([]*Server, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			srvs[i], errs[i] = New(t.Context(), haConfig(t, dsn), Options{Logger: slog.New(slog.DiscardHandler), Getenv: getenv, Version: "ha"})
		}()
	}
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i], "server %d", i)
		s := srvs[i]
		require.NoError(t, s.Start())
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			require.NoError(t, s.Shutdown(ctx))
		})
	}
	for i := 1; i < n; i++ {
		require.Equal(t, srvs[0].SigningKey(), srvs[i].SigningKey(), "server %d signs with another key", i)
	}
	require.NoFileExists(t, srvs[0].cfg.signingKeyFile(), "no per-server key file in HA")
	stored, err := srvs[0].Store().GetSetting(t.Context(), SharedSigningKeySetting)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(stored, sealedPrefix))
	require.NotContains(t, stored, base64.StdEncoding.EncodeToString(srvs[0].SigningKey()), "the key is sealed at rest")

	// A session from server 0 is accepted by every server.
	c0, err := client.New("http://"+srvs[0].APIAddr(), nil)
	require.NoError(t, err)
	cr, err := c0.Login(t.Context(), BootstrapAdmin, env[EnvAdminPassword])
	require.NoError(t, err)
	for i := range n {
		c, err := client.New("http://"+srvs[i].APIAddr(), nil)
		require.NoError(t, err)
		c.WithCredentials(cr, "")
		task, err := c.SubmitTask(t.Context(), apitypes.TaskSpecJSON{Name: "ha", Command: []string{"true"}})
		require.NoError(t, err, "server %d", i)
		_, err = c.ListTasks(t.Context(), url.Values{"limit": {"1"}})
		require.NoError(t, err)
		require.NotZero(t, task.ID)
	}

	// Another secret key: the sealed key does not open, the server stops.
	other := map[string]string{EnvSecretKey: newSecretKey(t)}
	_, err = New(t.Context(), haConfig(t, dsn), Options{Logger: slog.New(slog.DiscardHandler), Getenv: func(k string) string { return other[k] }})
	require.ErrorContains(t, err, "every server must use the same ha.secret_key_file")
	require.ErrorContains(t, err, "所有服务器必须使用同一个")
	// No key at all.
	_, err = New(t.Context(), haConfig(t, dsn), Options{Logger: slog.New(slog.DiscardHandler), Getenv: func(string) string { return "" }})
	require.ErrorContains(t, err, "ha.secret_key_file or "+EnvSecretKey)
	// The stored key is unchanged by the refused starts.
	again, err := srvs[0].Store().GetSetting(t.Context(), SharedSigningKeySetting)
	require.NoError(t, err)
	require.Equal(t, stored, again)
}

// TestHASharedAgentCA: the auto-generated agent CA is created once and
// read back by every server.
func TestHASharedAgentCA(t *testing.T) {
	dsn := pgtest.Schema(t)
	s, _ := startServer(t, dsn, nil)
	key, err := base64.StdEncoding.DecodeString(newSecretKey(t))
	require.NoError(t, err)
	a, err := newSharedSecrets(s.Store(), key)
	require.NoError(t, err)
	b, err := newSharedSecrets(s.Store(), key)
	require.NoError(t, err)
	ca1, err := a.sharedCA(t.Context(), "a")
	require.NoError(t, err)
	ca2, err := b.sharedCA(t.Context(), "b")
	require.NoError(t, err)
	require.Equal(t, ca1.CertPEM, ca2.CertPEM)
	stored, err := s.Store().GetSetting(t.Context(), SharedCAKeySetting)
	require.NoError(t, err)
	require.NotContains(t, stored, "PRIVATE KEY")
	// Half a CA in the database is refused, not silently replaced.
	require.NoError(t, s.Store().DeleteSetting(t.Context(), SharedCACertSetting))
	_, err = b.sharedCA(t.Context(), "b")
	require.ErrorContains(t, err, "only partly")
}
