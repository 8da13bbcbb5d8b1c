package credentials

import (
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// Files of the node's client certificate (mTLS), beside credentials.json.
// The key is generated on the node and never sent anywhere.
const (
	CertFile = "client.crt"
	KeyFile  = "client.key"
	CAFile   = "ca.crt" // the CA bundle returned at enrollment
)

// ErrNoCert means the node has no client certificate (mTLS off at enrollment).
var ErrNoCert = errors.New("no client certificate")

// SaveCert stores the client certificate, its private key and the CA
// bundle, each 0600 and written atomically. The certificate and CA are
// public, but one mode for the whole set keeps the rule simple to audit.
func SaveCert(dataDir string, certPEM, keyPEM, caPEM []byte) error {
	if len(certPEM) == 0 || len(keyPEM) == 0 {
		return errors.New("credentials: certificate and key are required")
	}
	if _, err := tls.X509KeyPair(certPEM, keyPEM); err != nil {
		return fmt.Errorf("credentials: certificate does not match the key: %w", err)
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return fmt.Errorf("credentials: %w", err)
	}
	// Key first: a certificate without its key is useless, the reverse is
	// merely incomplete and LoadCert reports it.
	for _, f := range []struct {
		name string
		b    []byte
	}{{KeyFile, keyPEM}, {CertFile, certPEM}, {CAFile, caPEM}} {
		if len(f.b) == 0 {
			continue
		}
		if err := writeFile0600(filepath.Join(dataDir, f.name), f.b); err != nil {
			return err
		}
	}
	return nil
}

// LoadCert returns the node's client certificate and the CA bundle
// (possibly empty), ErrNoCert when the node has none. Like Load, it
// refuses a key file readable by group or others.
func LoadCert(dataDir string) (tls.Certificate, []byte, error) {
	keyPath := filepath.Join(dataDir, KeyFile)
	st, err := os.Stat(keyPath)
	if errors.Is(err, os.ErrNotExist) {
		return tls.Certificate{}, nil, ErrNoCert
	}
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("credentials: %w", err)
	}
	if runtime.GOOS != "windows" && st.Mode().Perm()&0o077 != 0 {
		return tls.Certificate{}, nil, fmt.Errorf("credentials: %s has mode %o; it must be 0600 (chmod 600 %s)", keyPath, st.Mode().Perm(), keyPath)
	}
	cert, err := tls.LoadX509KeyPair(filepath.Join(dataDir, CertFile), keyPath)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("credentials: client certificate: %w", err)
	}
	ca, err := os.ReadFile(filepath.Join(dataDir, CAFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return tls.Certificate{}, nil, fmt.Errorf("credentials: %w", err)
	}
	return cert, ca, nil
}
