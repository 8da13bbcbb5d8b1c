package server

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The key pin the deploy one-liner hands curl --pinnedpubkey is the one
// openssl computes from the certificate, and the one a re-encoding of the
// parsed public key gives.
func TestServerPubkeyPinMatchesOpenSSL(t *testing.T) {
	dir := t.TempDir()
	certPath, _, fp := writeSelfSigned(t, dir)
	id, err := readCertIdentity(certPath)
	require.NoError(t, err)
	require.Equal(t, fp, id.fingerprint)
	require.True(t, id.selfSigned)
	require.True(t, strings.HasPrefix(id.pubkeyPin, "sha256//"), id.pubkeyPin)

	b, err := os.ReadFile(certPath)
	require.NoError(t, err)
	blk, _ := pem.Decode(b)
	require.NotNil(t, blk)
	cert, err := x509.ParseCertificate(blk.Bytes)
	require.NoError(t, err)
	der, err := x509.MarshalPKIXPublicKey(cert.PublicKey)
	require.NoError(t, err)
	sum := sha256.Sum256(der)
	require.Equal(t, "sha256//"+base64.StdEncoding.EncodeToString(sum[:]), id.pubkeyPin)
	require.NotEqual(t, sha256.Sum256(blk.Bytes), sum, "the pin is of the key, not of the whole certificate")

	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("openssl not on PATH: checked against the re-encoded key only")
	}
	out, err := exec.Command("sh", "-c", `openssl x509 -in "$1" -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64`, "sh", certPath).Output()
	require.NoError(t, err)
	require.Equal(t, "sha256//"+strings.TrimSpace(string(out)), id.pubkeyPin)
}

func TestReadCertIdentityRejectsNonPEM(t *testing.T) {
	p := t.TempDir() + "/not.pem"
	require.NoError(t, os.WriteFile(p, []byte("not a certificate"), 0o600))
	_, err := readCertIdentity(p)
	require.ErrorContains(t, err, "no PEM certificate")
}
