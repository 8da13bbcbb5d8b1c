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
	"github.com/heteroflow/heteroflow/agent/credentials"
	"github.com/heteroflow/heteroflow/agent/daemon"
	"github.com/heteroflow/heteroflow/controlplane/app"
	"github.com/heteroflow/heteroflow/controlplane/server"
)

// TestAgentRenewsCertificateAndRevokedNodeIsRefused runs the real agent
// against a server signing 6-second certificates, with agent certificates
// required: the agent renews its own several times without enrolling
// again and keeps heartbeating past the first certificate's expiry. Then
// the node is revoked: its certificate is refused on the next request and
// a long-poll waiting with it is answered 401 at once.
func TestAgentRenewsCertificateAndRevokedNodeIsRefused(t *testing.T) {
	dir := agenttest.DataDir(t)
	certPath, keyPath, pin := selfSigned(t, dir)
	cfg := server.Defaults()
	cfg.APIAddr, cfg.ConsoleAddr, cfg.DataDir = "127.0.0.1:0", "", filepath.Join(dir, "server")
	cfg.TLS = server.TLSConfig{Cert: certPath, Key: keyPath, MTLS: true, RequireAgentCert: true,
		AgentCertValidity: server.Duration(6 * time.Second)}
	env := map[string]string{server.EnvAdminPassword: "Root-Password-123"}
	a, err := app.New(t.Context(), cfg, server.Options{Logger: quiet, Stderr: io.Discard, Getenv: func(k string) string { return env[k] }})
	require.NoError(t, err)
	require.NoError(t, a.Start())
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, a.Shutdown(ctx))
	}()
	base := "https://" + a.APIAddr()
	roots := x509.NewCertPool()
	b, err := os.ReadFile(certPath)
	require.NoError(t, err)
	roots.AppendCertsFromPEM(b)
	client := func(cert *tls.Certificate) *http.Client {
		tc := &tls.Config{RootCAs: roots}
		if cert != nil {
			tc.Certificates = []tls.Certificate{*cert}
		}
		return &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{TLSClientConfig: tc}}
	}
	hc := client(nil)
	send := func(hc *http.Client, method, path, bearer, body string) (int, []byte) {
		t.Helper()
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		res, err := hc.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		return res.StatusCode, raw
	}
	call := func(method, path, bearer, body string, out any) {
		t.Helper()
		code, raw := send(hc, method, path, bearer, body)
		require.Less(t, code, 300, "%s %s: %s", method, path, raw)
		if out != nil {
			require.NoError(t, json.Unmarshal(raw, out), string(raw))
		}
	}
	var login struct {
		AccessToken string `json:"access_token"`
	}
	call("POST", "/api/v1/auth/login", "", `{"username":"admin","password":"Root-Password-123"}`, &login)
	var tok struct {
		Token string `json:"token"`
	}
	call("POST", "/api/v1/bootstrap-tokens", login.AccessToken, `{"description":"renew"}`, &tok)

	agentDir := filepath.Join(dir, "agent")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- daemon.Run(ctx, daemon.Config{Server: base, Token: tok.Token, DataDir: agentDir, ServerFingerprint: pin,
			Heartbeat: 200 * time.Millisecond, PollWait: time.Second, Logger: quiet, SMI: noTools})
	}()
	defer func() { cancel(); <-done }()

	type nodeList struct {
		Items []struct {
			ID            string     `json:"id"`
			LastHeartbeat *time.Time `json:"last_heartbeat"`
		} `json:"items"`
	}
	var nodes nodeList
	require.Eventually(t, func() bool {
		call("GET", "/api/v1/nodes", login.AccessToken, "", &nodes)
		return len(nodes.Items) == 1 && nodes.Items[0].LastHeartbeat != nil
	}, 20*time.Second, 100*time.Millisecond)
	nodeID := nodes.Items[0].ID
	var creds credentials.Credentials
	require.Eventually(t, func() bool {
		creds, err = credentials.Load(agentDir)
		return err == nil // written just after the server enrolled the node
	}, 10*time.Second, 50*time.Millisecond)
	leafOf := func() *x509.Certificate {
		c, _, err := credentials.LoadCert(agentDir)
		require.NoError(t, err)
		l, err := x509.ParseCertificate(c.Certificate[0])
		require.NoError(t, err)
		return l
	}
	first := leafOf()
	require.WithinDuration(t, time.Now().Add(6*time.Second), first.NotAfter, 3*time.Second, "the configured short life")

	// Past the first certificate's end, two renewals later, the node still
	// heartbeats, with the same identity and API key: no re-enrolment.
	serials := map[string]bool{first.SerialNumber.String(): true}
	deadline := first.NotAfter.Add(8 * time.Second)
	for time.Now().Before(deadline) {
		serials[leafOf().SerialNumber.String()] = true
		time.Sleep(200 * time.Millisecond)
	}
	require.GreaterOrEqual(t, len(serials), 3, "renewed at two thirds of each life")
	cur := leafOf()
	require.Equal(t, nodeID, cur.Subject.CommonName)
	require.True(t, cur.NotAfter.After(first.NotAfter))
	call("GET", "/api/v1/nodes", login.AccessToken, "", &nodes)
	require.Len(t, nodes.Items, 1, "no second node: the agent never enrolled again")
	require.True(t, nodes.Items[0].LastHeartbeat.After(first.NotAfter), "heartbeats continue after the first certificate expired")
	again, err := credentials.Load(agentDir)
	require.NoError(t, err)
	require.Equal(t, creds, again, "the node's credential is unchanged")

	// Revocation: a long-poll waiting with the node's certificate ends at
	// once, and the next request with it is refused.
	nodeCert, _, err := credentials.LoadCert(agentDir)
	require.NoError(t, err)
	asNode := client(&nodeCert)
	code, raw := send(asNode, "POST", "/api/v1/agents/heartbeat", "", `{}`)
	require.NotEqual(t, http.StatusUnauthorized, code, "the node's certificate works before revocation: %s", raw)
	polled := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest("GET", base+"/api/v1/agents/assignments?wait=30s", nil)
		res, err := asNode.Do(req)
		if err != nil {
			polled <- 0
			return
		}
		res.Body.Close()
		polled <- res.StatusCode
	}()
	time.Sleep(300 * time.Millisecond) // the poll is waiting
	revokedAt := time.Now()
	call("POST", "/api/v1/nodes/"+nodeID+"/revoke", login.AccessToken, "", nil)
	select {
	case c := <-polled:
		require.Equal(t, http.StatusUnauthorized, c, "the open long-poll is answered 401")
		require.Less(t, time.Since(revokedAt), 3*time.Second)
	case <-time.After(10 * time.Second):
		t.Fatal("the long-poll of a revoked node is still open")
	}
	code, raw = send(asNode, "POST", "/api/v1/agents/heartbeat", "", `{}`)
	require.Equal(t, http.StatusUnauthorized, code, "refused on the first request after revocation: %s", raw)
	require.Contains(t, string(raw), "revoked")
	code, _ = send(asNode, "POST", "/api/v1/agents/certificate", "", `{"csr":"x"}`)
	require.Equal(t, http.StatusUnauthorized, code, "a revoked node cannot renew either")
	var node struct {
		Cordoned bool `json:"cordoned"`
	}
	call("GET", "/api/v1/nodes/"+nodeID, login.AccessToken, "", &node)
	require.True(t, node.Cordoned, "a revoked node takes no new tasks")
}
