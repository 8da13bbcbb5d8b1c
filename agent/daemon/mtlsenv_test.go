//go:build unix

package daemon_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/agent/agenttest"
	"github.com/heteroflow/heteroflow/agent/daemon"
	"github.com/heteroflow/heteroflow/controlplane/app"
	"github.com/heteroflow/heteroflow/controlplane/server"
)

// mtlsEnv is the assembled server over HTTPS (a self-signed certificate
// the agent trusts by its pinned fingerprint) with mTLS and agent
// certificates required, and an admin session.
type mtlsEnv struct {
	t     *testing.T
	dir   string
	base  string
	pin   string
	roots *x509.CertPool
	hc    *http.Client
	admin string // the admin's access token
}

// startMTLS starts the server; mod changes its TLS settings first.
func startMTLS(t *testing.T, mod func(*server.TLSConfig)) *mtlsEnv {
	dir := agenttest.DataDir(t)
	certPath, keyPath, pin := selfSigned(t, dir)
	cfg := server.Defaults()
	cfg.APIAddr, cfg.ConsoleAddr, cfg.DataDir = "127.0.0.1:0", "", filepath.Join(dir, "server")
	cfg.TLS = server.TLSConfig{Cert: certPath, Key: keyPath, MTLS: true, RequireAgentCert: true}
	if mod != nil {
		mod(&cfg.TLS)
	}
	env := map[string]string{server.EnvAdminPassword: "Root-Password-123"}
	a, err := app.New(t.Context(), cfg, server.Options{Logger: quiet, Stderr: io.Discard, Getenv: func(k string) string { return env[k] }})
	require.NoError(t, err)
	require.NoError(t, a.Start())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, a.Shutdown(ctx))
	})
	e := &mtlsEnv{t: t, dir: dir, base: "https://" + a.APIAddr(), pin: pin, roots: x509.NewCertPool()}
	b, err := os.ReadFile(certPath)
	require.NoError(t, err)
	e.roots.AppendCertsFromPEM(b)
	e.hc = e.client(nil)
	var login struct {
		AccessToken string `json:"access_token"`
	}
	e.call("POST", "/api/v1/auth/login", "", `{"username":"admin","password":"Root-Password-123"}`, &login)
	e.admin = login.AccessToken
	return e
}

// client trusts the server and presents cert when non-nil.
func (e *mtlsEnv) client(cert *tls.Certificate) *http.Client {
	tc := &tls.Config{RootCAs: e.roots}
	if cert != nil {
		tc.Certificates = []tls.Certificate{*cert}
	}
	return &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{TLSClientConfig: tc}}
}

// send makes one request with hc and returns the status and body.
func (e *mtlsEnv) send(hc *http.Client, method, path, bearer, body string) (int, []byte) {
	e.t.Helper()
	req, err := http.NewRequest(method, e.base+path, strings.NewReader(body))
	require.NoError(e.t, err)
	req.Header.Set("Content-Type", "application/json")
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	res, err := hc.Do(req)
	require.NoError(e.t, err)
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return res.StatusCode, raw
}

// call requires a 2xx answer and decodes it into out (when not nil).
func (e *mtlsEnv) call(method, path, bearer, body string, out any) {
	e.t.Helper()
	code, raw := e.send(e.hc, method, path, bearer, body)
	require.Less(e.t, code, 300, "%s %s: %s", method, path, raw)
	if out != nil {
		require.NoError(e.t, json.Unmarshal(raw, out), string(raw))
	}
}

// runAgent enrolls and runs the real agent in agentDir until the test ends.
func (e *mtlsEnv) runAgent(agentDir string) {
	var tok struct {
		Token string `json:"token"`
	}
	e.call("POST", "/api/v1/bootstrap-tokens", e.admin, `{"description":"mtls"}`, &tok)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- daemon.Run(ctx, daemon.Config{Server: e.base, Token: tok.Token, DataDir: agentDir, ServerFingerprint: e.pin,
			Heartbeat: 100 * time.Millisecond, PollWait: time.Second, Logger: quiet, SMI: noTools})
	}()
	e.t.Cleanup(func() { cancel(); require.NoError(e.t, <-done) })
}
