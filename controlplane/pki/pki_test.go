package pki

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/agent/credentials"
)

func TestLoadOrCreateCreatesThenReuses(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "pki")
	ca, err := LoadOrCreate(dir)
	require.NoError(t, err)
	require.True(t, ca.Cert.IsCA)
	st, err := os.Stat(filepath.Join(dir, CAKeyFile))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "CA key must be 0600")

	again, err := LoadOrCreate(dir)
	require.NoError(t, err)
	require.True(t, ca.Cert.Equal(again.Cert), "second start must reuse the CA, not mint a new one")

	require.NoError(t, os.Remove(filepath.Join(dir, CAKeyFile)))
	_, err = LoadOrCreate(dir)
	require.ErrorContains(t, err, "both")
}

func TestLoadRejectsMismatchedKey(t *testing.T) {
	t.Parallel()
	a, err := LoadOrCreate(filepath.Join(t.TempDir(), "a"))
	require.NoError(t, err)
	bDir := filepath.Join(t.TempDir(), "b")
	_, err = LoadOrCreate(bDir)
	require.NoError(t, err)
	certA := filepath.Join(t.TempDir(), "a.crt")
	require.NoError(t, os.WriteFile(certA, a.CertPEM, 0o644))
	_, err = Load(certA, filepath.Join(bDir, CAKeyFile))
	require.ErrorContains(t, err, "does not belong")
}

func csrFor(t *testing.T, key any, cn string, dns ...string) []byte {
	t.Helper()
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn}, DNSNames: dns}, key)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

func TestSignCSR(t *testing.T) {
	t.Parallel()
	ca, err := LoadOrCreate(filepath.Join(t.TempDir(), "pki"))
	require.NoError(t, err)
	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p224, _ := ecdsa.GenerateKey(elliptic.P224(), rand.Reader)
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	_, agentCSR, err := credentials.NewKeyAndCSR("gpu-01")
	require.NoError(t, err)
	tampered := csrFor(t, p256, "x")
	blk, _ := pem.Decode(tampered)
	blk.Bytes[len(blk.Bytes)-3] ^= 0xff // break the signature
	tampered = pem.EncodeToMemory(blk)

	cases := []struct {
		name, node string
		csr        []byte
		wantErr    string
	}{
		{"agent csr", "gpu-01-a1b2c3", agentCSR, ""},
		// The CSR asks to be "admin" with a SAN: the certificate must still name only the node.
		{"cn injection ignored", "gpu-01-a1b2c3", csrFor(t, p256, "admin", "server.example"), ""},
		{"node id with separators", "gpu-01,CN=admin", agentCSR, "not a valid certificate name"},
		{"node id with newline", "gpu\n01", agentCSR, "not a valid certificate name"},
		{"rsa key", "n-1", csrFor(t, rsaKey, "n"), "ECDSA"},
		{"ed25519 key", "n-1", csrFor(t, edKey, "n"), "ECDSA"},
		{"weak curve", "n-1", csrFor(t, p224, "n"), "ECDSA"},
		{"bad signature", "n-1", tampered, "bad certificate request"},
		{"not pem", "n-1", []byte("hello"), "PEM CERTIFICATE REQUEST"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := ca.SignCSR(tc.csr, tc.node)
			if tc.wantErr != "" {
				require.ErrorIs(t, err, ErrBadCSR)
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			cert, err := ParseCertPEM(out)
			require.NoError(t, err)
			require.Equal(t, tc.node, cert.Subject.CommonName)
			require.Empty(t, cert.DNSNames)
			require.Equal(t, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, cert.ExtKeyUsage)
			require.WithinDuration(t, cert.NotBefore.Add(ClientCertValidity), cert.NotAfter, 10*60e9)
			_, err = cert.Verify(x509.VerifyOptions{Roots: ca.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
			require.NoError(t, err)
			id, err := NodeID(cert)
			require.NoError(t, err)
			require.Equal(t, tc.node, id)
		})
	}
}
