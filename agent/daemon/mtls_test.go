//go:build unix

package daemon_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
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
	"github.com/heteroflow/heteroflow/receivers/smi"
)

// selfSigned writes a self-signed server certificate for 127.0.0.1 and
// returns its paths and the SHA-256 of its DER (the pin).
func selfSigned(t *testing.T, dir string) (certPath, keyPath, fingerprint string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "self-signed"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	certPath, keyPath = filepath.Join(dir, "srv.crt"), filepath.Join(dir, "srv.key")
	require.NoError(t, os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644))
	require.NoError(t, os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600))
	sum := sha256.Sum256(der)
	return certPath, keyPath, hex.EncodeToString(sum[:])
}

func noTools(context.Context, string, ...string) ([]byte, error) { return nil, smi.ErrToolNotFound }

// TestAgentEnrollsWithCSRAndUsesClientCert runs the real agent against the
// assembled server with HTTPS (self-signed, trusted by a pinned
// fingerprint), mTLS and agent certificates required: the node can only
// heartbeat if the agent made a key, got it signed and presents it.
func TestAgentEnrollsWithCSRAndUsesClientCert(t *testing.T) {
	e := startMTLS(t, nil)
	agentDir := filepath.Join(e.dir, "agent")
	e.runAgent(agentDir)
	call := e.call

	var nodes struct {
		Items []struct {
			ID            string     `json:"id"`
			CPUCount      int        `json:"cpu_count"`
			LastHeartbeat *time.Time `json:"last_heartbeat"`
		} `json:"items"`
	}
	require.Eventually(t, func() bool {
		call("GET", "/api/v1/nodes", e.admin, "", &nodes)
		return len(nodes.Items) == 1 && nodes.Items[0].CPUCount > 0 && nodes.Items[0].LastHeartbeat != nil
	}, 20*time.Second, 100*time.Millisecond, "the agent's heartbeats must pass with its client certificate")

	for _, f := range []string{credentials.KeyFile, credentials.CertFile, credentials.CAFile, credentials.FileName} {
		st, err := os.Stat(filepath.Join(agentDir, f))
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), f)
	}
	creds, err := credentials.Load(agentDir)
	require.NoError(t, err)
	require.Equal(t, nodes.Items[0].ID, creds.NodeID)
	require.Equal(t, e.pin, creds.ServerFingerprint, "the pin is kept for later starts")
	cert, _, err := credentials.LoadCert(agentDir)
	require.NoError(t, err)
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	require.NoError(t, err)
	require.Equal(t, creds.NodeID, leaf.Subject.CommonName)
}

// TestAgentRefusesWrongPin: a fingerprint that does not match the server
// certificate stops enrollment instead of trusting the server.
func TestAgentRefusesWrongPin(t *testing.T) {
	dir := agenttest.DataDir(t)
	certPath, keyPath, _ := selfSigned(t, dir)
	cert, err := tls.LoadX509KeyPair(certPath, keyPath)
	require.NoError(t, err)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	require.NoError(t, err)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		t.Error("the agent must not send anything to a server whose certificate does not match the pin")
	})}
	go srv.Serve(ln) //nolint:errcheck // ends with Close
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	wrong := strings.Repeat("ab", 32)
	err = daemon.Run(ctx, daemon.Config{Server: fmt.Sprintf("https://%s", ln.Addr()), Token: "hfb_x", DataDir: filepath.Join(dir, "a"),
		ServerFingerprint: wrong, Logger: quiet, SMI: noTools})
	require.ErrorContains(t, err, "does not match the pinned one", "a pin mismatch fails at once, not by timeout")
	_, err = credentials.Load(filepath.Join(dir, "a"))
	require.ErrorIs(t, err, credentials.ErrNotEnrolled)
}

func TestConfigValidatesTrustFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		cfg     daemon.Config
		wantErr string
	}{
		{"pin on http", daemon.Config{Server: "http://s:3333", DataDir: "d", ServerFingerprint: strings.Repeat("00", 32)}, "need an https://"},
		{"short pin", daemon.Config{Server: "https://s:3333", DataDir: "d", ServerFingerprint: "abcd"}, "64-hex-digit"},
		{"pin with colons", daemon.Config{Server: "https://s:3333", DataDir: "d", ServerFingerprint: strings.Repeat("AB:", 31) + "AB"}, ""},
		{"ca file on http", daemon.Config{Server: "http://s:3333", DataDir: "d", CAFile: "ca.pem"}, "need an https://"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if tc.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.wantErr)
		})
	}
}
