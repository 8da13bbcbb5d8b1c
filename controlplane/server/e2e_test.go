package server

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
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
		require.Equal(t, "ok", h.Status)
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

	// /metrics carries the API's request metrics, to a caller with metrics:read.
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+s.APIAddr()+"/metrics", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+c.Credentials().AccessToken)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Contains(t, string(b), `heteroflow_http_requests_total{code="201",method="POST",route="/api/v1/tasks"} 1`)
}

// The server's own metrics are not readable anonymously on the API
// listener, and the console's /metrics is the explorer page; metrics_addr
// serves them without authentication on a listener of their own.
func TestServerMetricsNeedAuthOrOwnListener(t *testing.T) {
	cfg := Defaults()
	cfg.APIAddr, cfg.ConsoleAddr, cfg.MetricsAddr = "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0"
	cfg.DataDir = t.TempDir()
	s, err := New(t.Context(), cfg, Options{Logger: slog.New(slog.DiscardHandler), Stderr: io.Discard,
		Getenv: func(k string) string { return map[string]string{EnvAdminPassword: "Env-Root-Pass-1"}[k] }})
	require.NoError(t, err)
	require.NoError(t, s.Start())
	t.Cleanup(func() { require.NoError(t, s.Shutdown(context.Background())) })

	res, err := http.Get("http://" + s.APIAddr() + "/metrics")
	require.NoError(t, err)
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	require.Equal(t, http.StatusUnauthorized, res.StatusCode)
	require.NotContains(t, string(b), "go_goroutines")

	res, err = http.Get("http://" + s.ConsoleAddr() + "/metrics")
	require.NoError(t, err)
	b, _ = io.ReadAll(res.Body)
	res.Body.Close()
	require.NotContains(t, string(b), "go_goroutines", "the console's /metrics is the explorer page")
	require.Contains(t, res.Header.Get("Content-Type"), "text/html")

	res, err = http.Get("http://" + s.MetricsAddr() + "/metrics")
	require.NoError(t, err)
	b, _ = io.ReadAll(res.Body)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Contains(t, string(b), "go_goroutines")
}

func TestEnrollmentInfo(t *testing.T) {
	s, _ := startServer(t, "", map[string]string{EnvAdminPassword: "Env-Root-Pass-1"})
	c, err := client.New("http://"+s.ConsoleAddr(), nil)
	require.NoError(t, err)
	_, err = c.Login(t.Context(), BootstrapAdmin, "Env-Root-Pass-1")
	require.NoError(t, err)
	var info EnrollmentJSON
	require.NoError(t, c.Do(t.Context(), http.MethodGet, "/api/v1/server/enrollment", nil, &info))
	_, port, _ := strings.Cut(s.APIAddr(), ":")
	require.Equal(t, port, strconv.Itoa(info.APIPort), "the API listener's real port, not a hard-coded 3333")
	require.False(t, info.TLS)
	require.Empty(t, info.ServerFingerprint)
	require.Empty(t, info.ServerPubkeyPin)

	dir := t.TempDir()
	certPath, keyPath, want := writeSelfSigned(t, dir)
	cfg := Defaults()
	cfg.APIAddr, cfg.ConsoleAddr, cfg.DataDir = "127.0.0.1:0", "", t.TempDir()
	cfg.TLS = TLSConfig{Cert: certPath, Key: keyPath}
	cfg.ExternalURL = "https://hf.example.com:8443/"
	s2, err := New(t.Context(), cfg, Options{Logger: slog.New(slog.DiscardHandler), Stderr: io.Discard,
		Getenv: func(k string) string { return map[string]string{EnvAdminPassword: "Env-Root-Pass-1"}[k] }})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s2.Shutdown(context.Background())) })
	require.Equal(t, "https://hf.example.com:8443", s2.enrollment.ExternalURL)
	require.True(t, s2.enrollment.TLS)
	require.True(t, s2.enrollment.SelfSigned)
	require.Equal(t, want, s2.enrollment.ServerFingerprint)
	require.Regexp(t, `^sha256//[A-Za-z0-9+/]{43}=$`, s2.enrollment.ServerPubkeyPin)

	bad := Defaults()
	bad.ExternalURL = "hf.example.com"
	require.ErrorContains(t, bad.Validate(), "external_url")
}

// writeSelfSigned writes a self-signed certificate and key; it returns
// their paths and the certificate's SHA-256 in openssl's form.
func writeSelfSigned(t *testing.T, dir string) (string, string, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"},
		DNSNames: []string{"localhost"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	kb, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	certPath, keyPath := filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem")
	require.NoError(t, os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600))
	sum := sha256.Sum256(der)
	hexs := strings.ToUpper(hex.EncodeToString(sum[:]))
	var parts []string
	for i := 0; i < len(hexs); i += 2 {
		parts = append(parts, hexs[i:i+2])
	}
	return certPath, keyPath, strings.Join(parts, ":")
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
	require.ErrorContains(t, err, "不符合密码策略", "the reason in both languages")
}

// A port already in use stops the server with the flag to change, in both
// languages.
func TestListenConflictIsBilingual(t *testing.T) {
	first, _ := startServer(t, "", map[string]string{EnvAdminPassword: "Env-Root-Pass-1"})
	cfg := Defaults()
	cfg.APIAddr, cfg.ConsoleAddr = first.APIAddr(), ""
	cfg.DataDir = t.TempDir()
	s, err := New(t.Context(), cfg, Options{Logger: slog.New(slog.DiscardHandler), Stderr: io.Discard,
		Getenv: func(k string) string { return map[string]string{EnvAdminPassword: "Env-Root-Pass-1"}[k] }})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	err = s.Start()
	require.ErrorContains(t, err, "listen api "+first.APIAddr())
	require.ErrorContains(t, err, "无法监听")
	require.ErrorContains(t, err, "--api-addr")
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
