package daemon

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCollectorTrustsThePinnedServer: with a --server-fingerprint pin and
// no CA file, the embedded collector's exporter gets the pinned (self-
// signed) certificate as its CA, and a client trusting only that file
// reaches the server, as the exporter's remote write does.
func TestCollectorTrustsThePinnedServer(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	defer srv.Close()
	sum := sha256.Sum256(srv.Certificate().Raw)
	dir := t.TempDir()
	a := &Agent{cfg: Config{Server: srv.URL, DataDir: dir, ServerFingerprint: hex.EncodeToString(sum[:]), Logger: slog.New(slog.DiscardHandler)}}

	tlsCfg := a.exporterTLS(t.Context())
	require.Equal(t, filepath.Join(dir, PinnedCertFile), tlsCfg.CAFile)
	pemBytes, err := os.ReadFile(tlsCfg.CAFile)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(pemBytes))
	c := srv.Client()
	c.Transport.(*http.Transport).TLSClientConfig.RootCAs = pool
	res, err := c.Get(srv.URL)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusNoContent, res.StatusCode)

	// Without the pin's file, the system roots do not know the server.
	_, err = (&http.Client{}).Get(srv.URL)
	require.Error(t, err)
}

func TestPinMismatchWritesNothing(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	dir := t.TempDir()
	wrong := sha256.Sum256([]byte("another certificate"))
	a := &Agent{cfg: Config{Server: srv.URL, DataDir: dir, ServerFingerprint: hex.EncodeToString(wrong[:]), Logger: slog.New(slog.DiscardHandler)}}
	require.Empty(t, a.exporterTLS(t.Context()).CAFile)
	_, err := os.Stat(filepath.Join(dir, PinnedCertFile))
	require.ErrorIs(t, err, os.ErrNotExist)

	_, err = writePinnedCert(t.Context(), a.cfg, a.cfg.ServerFingerprint)
	require.ErrorIs(t, err, errPinMismatch)
}
