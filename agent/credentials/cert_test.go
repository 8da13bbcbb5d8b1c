package credentials

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane/pki"
)

func TestSaveLoadCert(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, _, err := LoadCert(dir)
	require.ErrorIs(t, err, ErrNoCert)

	ca, err := pki.LoadOrCreate(filepath.Join(t.TempDir(), "pki"))
	require.NoError(t, err)
	keyPEM, csrPEM, err := NewKeyAndCSR("host")
	require.NoError(t, err)
	certPEM, err := ca.SignCSR(csrPEM, "host-abc123")
	require.NoError(t, err)
	otherKey, _, err := NewKeyAndCSR("host")
	require.NoError(t, err)
	require.ErrorContains(t, SaveCert(dir, certPEM, otherKey, ca.CertPEM), "does not match")

	require.NoError(t, SaveCert(dir, certPEM, keyPEM, ca.CertPEM))
	for _, f := range []string{KeyFile, CertFile, CAFile} {
		st, err := os.Stat(filepath.Join(dir, f))
		require.NoError(t, err)
		if runtime.GOOS != "windows" {
			require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), f)
		}
	}
	cert, gotCA, err := LoadCert(dir)
	require.NoError(t, err)
	require.Equal(t, ca.CertPEM, gotCA)
	require.Len(t, cert.Certificate, 1)

	if runtime.GOOS != "windows" {
		require.NoError(t, os.Chmod(filepath.Join(dir, KeyFile), 0o640))
		_, _, err = LoadCert(dir)
		require.ErrorContains(t, err, "must be 0600")
	}
}
