package app

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/agent/credentials"
	"github.com/heteroflow/heteroflow/agent/protocol"
	"github.com/heteroflow/heteroflow/controlplane/auth"
	"github.com/heteroflow/heteroflow/controlplane/pki"
	"github.com/heteroflow/heteroflow/controlplane/server"
)

// writeServerCert writes a self-signed ECDSA server certificate for
// 127.0.0.1 into dir and returns the certificate and key paths.
func writeServerCert(t *testing.T, dir string) (certPath, keyPath string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "heteroflow-test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	certPath, keyPath = filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key")
	require.NoError(t, os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644))
	require.NoError(t, os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600))
	return certPath, keyPath
}

// startTLSServer starts the assembled control plane with HTTPS on both
// listeners, mTLS for agents and agent certificates required.
func startTLSServer(t *testing.T) (a *App, serverCert string, roots *x509.CertPool) {
	t.Helper()
	dir := t.TempDir()
	certPath, keyPath := writeServerCert(t, dir)
	cfg := server.Defaults()
	cfg.APIAddr, cfg.ConsoleAddr, cfg.DataDir = "127.0.0.1:0", "127.0.0.1:0", dir
	cfg.TLS = server.TLSConfig{Cert: certPath, Key: keyPath, MTLS: true, RequireAgentCert: true}
	env := map[string]string{server.EnvAdminPassword: adminPassword}
	a, err := New(t.Context(), cfg, server.Options{Logger: slog.New(slog.DiscardHandler), Stderr: io.Discard,
		Getenv: func(k string) string { return env[k] }, Version: "mtls-test"})
	require.NoError(t, err)
	require.NoError(t, a.Start())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, a.Shutdown(ctx))
	})
	b, err := os.ReadFile(certPath)
	require.NoError(t, err)
	roots = x509.NewCertPool()
	require.True(t, roots.AppendCertsFromPEM(b))
	st, err := os.Stat(filepath.Join(dir, "pki", pki.CAKeyFile))
	require.NoError(t, err, "the agent CA is generated under <data_dir>/pki")
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	return a, certPath, roots
}

// httpsServer is testServer over HTTPS, optionally with a client certificate.
func httpsServer(t *testing.T, addr string, roots *x509.CertPool, cert *tls.Certificate) *testServer {
	tc := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	if cert != nil {
		tc.Certificates = []tls.Certificate{*cert}
	}
	return &testServer{t: t, base: "https://" + addr,
		http: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: tc}}}
}

func TestMTLSEnrollmentAndClientCertAuth(t *testing.T) {
	a, _, roots := startTLSServer(t)

	// A browser-style client (no certificate) still logs in with a
	// password, on the API and on the console listener.
	browser := httpsServer(t, a.APIAddr(), roots, nil)
	admin := browser.adminToken()
	console := httpsServer(t, a.Server().ConsoleAddr(), roots, nil)
	console.adminToken()

	// Enrollment with a CSR: the key stays here, the certificate names the node.
	_, tok := browser.bootstrapToken(admin)
	keyPEM, csrPEM, err := credentials.NewKeyAndCSR("admin") // a CSR asking to be "admin" gets the node id
	require.NoError(t, err)
	req := enrollBody(tok, "gpu-01", "nvidia", 2)
	req.CSR = string(csrPEM)
	var enrolled protocol.EnrollResponse
	browser.ok(http.StatusCreated, http.MethodPost, "/api/v1/agents/enroll", "", req, &enrolled)
	require.NotEmpty(t, enrolled.APIKey)
	require.NotEmpty(t, enrolled.Certificate)
	require.Equal(t, string(a.Server().CA().CertPEM), enrolled.CABundle)
	leaf, err := pki.ParseCertPEM([]byte(enrolled.Certificate))
	require.NoError(t, err)
	require.Equal(t, enrolled.NodeID, leaf.Subject.CommonName)

	// Heartbeat with the client certificate and no API key.
	cert, err := tls.X509KeyPair([]byte(enrolled.Certificate), keyPEM)
	require.NoError(t, err)
	agent := httpsServer(t, a.APIAddr(), roots, &cert)
	hb := protocol.Heartbeat{Health: "ok", CPUCount: 8, MemoryTotalMiB: 1024, MemoryFreeMiB: 512, Running: []protocol.RunningTask{}}
	agent.ok(http.StatusOK, http.MethodPost, "/api/v1/agents/heartbeat", "", hb, nil)
	var node struct {
		State string `json:"state"`
	}
	browser.ok(http.StatusOK, http.MethodGet, "/api/v1/nodes/"+enrolled.NodeID, admin, nil, &node)
	require.Equal(t, "online", node.State)
	// The certificate is an agent credential, not a person's.
	agent.fails(http.StatusForbidden, "forbidden", http.MethodGet, "/api/v1/users", "", nil)

	// require_agent_cert: the agent's API key alone is refused, clearly.
	msg := browser.fails(http.StatusUnauthorized, "unauthenticated", http.MethodPost, "/api/v1/agents/heartbeat", enrolled.APIKey, hb)
	require.Contains(t, msg, "client certificate")
	// The key together with the certificate passes.
	agent.ok(http.StatusOK, http.MethodPost, "/api/v1/agents/heartbeat", enrolled.APIKey, hb, nil)

	// A certificate from the server's own CA for a node that does not
	// exist authenticates nobody.
	strayKey, strayCSR, err := credentials.NewKeyAndCSR("x")
	require.NoError(t, err)
	strayPEM, err := a.Server().CA().SignCSR(strayCSR, "ghost-000000")
	require.NoError(t, err)
	stray, err := tls.X509KeyPair(strayPEM, strayKey)
	require.NoError(t, err)
	msg = httpsServer(t, a.APIAddr(), roots, &stray).fails(http.StatusUnauthorized, "unauthenticated",
		http.MethodPost, "/api/v1/agents/heartbeat", "", hb)
	require.Contains(t, msg, "no such node")

	// Revoking a node's API key also ends its certificate.
	_, tok2 := browser.bootstrapToken(admin)
	key2, csr2, err := credentials.NewKeyAndCSR("gpu-02")
	require.NoError(t, err)
	req2 := enrollBody(tok2, "gpu-02", "nvidia", 1)
	req2.CSR = string(csr2)
	var enrolled2 protocol.EnrollResponse
	browser.ok(http.StatusCreated, http.MethodPost, "/api/v1/agents/enroll", "", req2, &enrolled2)
	prefix, _, ok := auth.ParseAPIKey(enrolled2.APIKey)
	require.True(t, ok, enrolled2.APIKey)
	k2, err := a.Server().Store().GetAPIKeyByPrefix(t.Context(), prefix)
	require.NoError(t, err)
	require.NoError(t, a.Server().Store().RevokeAPIKey(t.Context(), k2.ID, time.Now()))
	cert2, err := tls.X509KeyPair([]byte(enrolled2.Certificate), key2)
	require.NoError(t, err)
	msg = httpsServer(t, a.APIAddr(), roots, &cert2).fails(http.StatusUnauthorized, "unauthenticated",
		http.MethodPost, "/api/v1/agents/heartbeat", "", hb)
	require.Contains(t, msg, "revoked")

	// A certificate for the real node signed by another CA fails the handshake.
	other, err := pki.LoadOrCreate(filepath.Join(t.TempDir(), "other"))
	require.NoError(t, err)
	forgedPEM, err := other.SignCSR(csrPEM, enrolled.NodeID)
	require.NoError(t, err)
	forged, err := tls.X509KeyPair(forgedPEM, keyPEM)
	require.NoError(t, err)
	forger := httpsServer(t, a.APIAddr(), roots, &forged)
	// Go's client only sends a certificate the server's CA list accepts;
	// force it so the server really sees the forged one.
	forger.http.Transport.(*http.Transport).TLSClientConfig.GetClientCertificate =
		func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &forged, nil }
	hreq, err := http.NewRequestWithContext(t.Context(), http.MethodPost, forger.base+"/api/v1/agents/heartbeat", strings.NewReader("{}"))
	require.NoError(t, err)
	res, err := forger.http.Do(hreq)
	if err == nil {
		res.Body.Close()
	}
	require.Error(t, err, "a client certificate from a foreign CA must be refused in the handshake")
	require.Contains(t, err.Error(), "certificate")
}

func TestEnrollWithoutMTLSIgnoresCSR(t *testing.T) {
	s := startServer(t, t.TempDir())
	admin := s.adminToken()
	_, tok := s.bootstrapToken(admin)
	_, csr, err := credentials.NewKeyAndCSR("h")
	require.NoError(t, err)
	req := enrollBody(tok, "plain-01", "nvidia", 1)
	req.CSR = string(csr)
	r := s.do(http.MethodPost, "/api/v1/agents/enroll", "", req)
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	var out protocol.EnrollResponse
	require.NoError(t, json.Unmarshal(r.Body, &out))
	require.NotEmpty(t, out.APIKey)
	require.Empty(t, out.Certificate, "no CA, no certificate: the agent keeps using its API key")
}
