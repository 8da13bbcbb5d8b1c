package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"time"
)

// File names of the auto-generated CA inside its directory (<data_dir>/pki).
const (
	CACertFile = "ca.crt"
	CAKeyFile  = "ca.key"
)

// caValidity is long on purpose: rotating the CA means re-enrolling every
// node, while the client certificates it signs stay short-lived.
const caValidity = 10 * 365 * 24 * time.Hour

// CA signs agent client certificates.
type CA struct {
	Cert    *x509.Certificate
	CertPEM []byte
	// ClientValidity is the life of the client certificates it signs
	// (0 = ClientCertValidity). Agents renew at two thirds of it.
	ClientValidity time.Duration
	key            crypto.Signer
	now            func() time.Time
}

// LoadOrCreate returns the CA in dir, creating an ECDSA P-256 CA there the
// first time (key 0600, directory 0700). A directory holding only one of
// the two files is an error rather than a silent regeneration, because a
// new CA would orphan every certificate already issued.
func LoadOrCreate(dir string) (*CA, error) {
	certPath, keyPath := filepath.Join(dir, CACertFile), filepath.Join(dir, CAKeyFile)
	_, certErr := os.Stat(certPath)
	_, keyErr := os.Stat(keyPath)
	switch {
	case certErr == nil && keyErr == nil:
		return Load(certPath, keyPath)
	case errors.Is(certErr, os.ErrNotExist) && errors.Is(keyErr, os.ErrNotExist):
	default:
		return nil, fmt.Errorf("pki: %s must hold both %s and %s or neither", dir, CACertFile, CAKeyFile)
	}
	ca, keyPEM, err := newCA()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("pki: %w", err)
	}
	if err := WriteFile(keyPath, keyPEM, 0o600); err != nil {
		return nil, err
	}
	if err := WriteFile(certPath, ca.CertPEM, 0o644); err != nil {
		return nil, err
	}
	return ca, nil
}

func newCA() (*CA, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("pki: generate CA key: %w", err)
	}
	serial, err := newSerial()
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: "HeteroFlow agent CA", Organization: []string{"HeteroFlow"}},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(caValidity),
		IsCA: true, BasicConstraintsValid: true, MaxPathLenZero: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("pki: self-sign CA: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, fmt.Errorf("pki: %w", err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("pki: %w", err)
	}
	ca := &CA{Cert: cert, CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), key: key, now: time.Now}
	return ca, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), nil
}

// Load reads an operator-provided CA (--tls-client-ca and --tls-ca-key).
func Load(certPath, keyPath string) (*CA, error) {
	certPEM, err := os.ReadFile(certPath)
	if err != nil {
		return nil, fmt.Errorf("pki: read CA certificate: %w", err)
	}
	keyPEM, err := os.ReadFile(keyPath)
	if err != nil {
		return nil, fmt.Errorf("pki: read CA key: %w", err)
	}
	cert, err := ParseCertPEM(certPEM)
	if err != nil {
		return nil, fmt.Errorf("pki: %s: %w", certPath, err)
	}
	if !cert.IsCA {
		return nil, fmt.Errorf("pki: %s is not a CA certificate", certPath)
	}
	key, err := ParseKeyPEM(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("pki: %s: %w", keyPath, err)
	}
	if !publicKeysEqual(cert.PublicKey, key.Public()) {
		return nil, fmt.Errorf("pki: %s does not belong to %s", keyPath, certPath)
	}
	return &CA{Cert: cert, CertPEM: certPEM, key: key, now: time.Now}, nil
}

// Pool is the pool client certificates must chain to.
func (c *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(c.Cert)
	return p
}

func publicKeysEqual(a, b crypto.PublicKey) bool {
	ak, ok := a.(interface{ Equal(crypto.PublicKey) bool })
	return ok && ak.Equal(b)
}

func newSerial() (*big.Int, error) {
	s, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, fmt.Errorf("pki: serial: %w", err)
	}
	return s, nil
}
