package daemon

import (
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/heteroflow/heteroflow/agent/credentials"
)

// Bootstrap trust, in order: --ca-file (the server's CA) replaces the
// system roots; --server-fingerprint pins the server's certificate for a
// self-signed server; otherwise the system roots, plus the CA bundle the
// server returned at enrollment. Verification is never switched off
// without a pin to check instead.

var errPinMismatch = errors.New("pin mismatch")

// trustError reports a server certificate that this agent does not
// trust: retrying cannot fix it, the operator must (--ca-file, the pin).
func trustError(err error) bool {
	var cv *tls.CertificateVerificationError
	return errors.Is(err, errPinMismatch) || errors.As(err, &cv)
}

// parseFingerprint accepts the hex SHA-256 that `openssl x509
// -fingerprint -sha256` prints (colons optional, any case).
func parseFingerprint(s string) ([]byte, error) {
	b, err := hex.DecodeString(strings.ReplaceAll(strings.TrimSpace(s), ":", ""))
	if err != nil || len(b) != sha256.Size {
		return nil, fmt.Errorf("--server-fingerprint %q must be the 64-hex-digit SHA-256 of the server certificate / 指纹应为 SHA-256", s)
	}
	return b, nil
}

// tlsConfig returns the client TLS settings for the server, nil for
// plain HTTP. pin is the stored or flagged fingerprint; cert, when
// non-nil, is presented as the client certificate; caBundle is the CA
// returned at enrollment.
func (c Config) tlsConfig(pin string, cert *tls.Certificate, caBundle []byte) (*tls.Config, error) {
	if !strings.HasPrefix(c.Server, "https://") {
		return nil, nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	switch {
	case c.CAFile != "":
		b, err := os.ReadFile(c.CAFile)
		if err != nil {
			return nil, fmt.Errorf("--ca-file: %w", err)
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(b) {
			return nil, fmt.Errorf("--ca-file %s holds no PEM certificate / CA 文件中没有证书", c.CAFile)
		}
	case pin != "":
		want, err := parseFingerprint(pin)
		if err != nil {
			return nil, err
		}
		// The chain is not checked against roots (a self-signed server has
		// none); the pin below is the check instead, on every handshake.
		tc.InsecureSkipVerify = true
		tc.VerifyConnection = func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("server sent no certificate")
			}
			got := sha256.Sum256(cs.PeerCertificates[0].Raw)
			if subtle.ConstantTimeCompare(got[:], want) != 1 {
				return fmt.Errorf("%w: server certificate fingerprint %x does not match the pinned one / 服务器证书指纹不匹配", errPinMismatch, got)
			}
			return nil
		}
	case len(caBundle) > 0:
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		pool.AppendCertsFromPEM(caBundle)
		tc.RootCAs = pool
	}
	if cert != nil {
		tc.Certificates = []tls.Certificate{*cert}
	}
	return tc, nil
}

// loadClientCert returns the stored client certificate and CA bundle, or
// nil when the node enrolled without mTLS.
func loadClientCert(dataDir string) (*tls.Certificate, []byte, error) {
	cert, ca, err := credentials.LoadCert(dataDir)
	if errors.Is(err, credentials.ErrNoCert) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	return &cert, ca, nil
}
