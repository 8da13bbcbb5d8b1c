package pki

import (
	"fmt"
	"time"
)

// Generate creates a new ECDSA P-256 agent CA and returns it with its key
// in PEM, for a caller that keeps the pair elsewhere than a directory (HA
// servers share it through the database).
func Generate() (*CA, []byte, error) { return newCA() }

// Parse builds a CA from its certificate and key in PEM, checking that the
// two belong together.
func Parse(certPEM, keyPEM []byte) (*CA, error) {
	cert, err := ParseCertPEM(certPEM)
	if err != nil {
		return nil, fmt.Errorf("pki: CA certificate: %w", err)
	}
	if !cert.IsCA {
		return nil, fmt.Errorf("pki: the certificate is not a CA")
	}
	key, err := ParseKeyPEM(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("pki: CA key: %w", err)
	}
	if !publicKeysEqual(cert.PublicKey, key.Public()) {
		return nil, fmt.Errorf("pki: the CA key does not belong to the certificate")
	}
	return &CA{Cert: cert, CertPEM: certPEM, key: key, now: time.Now}, nil
}
