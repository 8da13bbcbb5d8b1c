package pki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"time"
)

// ClientCertValidity is the life of an agent client certificate: short, so
// a stolen node key stops working on its own; the API key (revocable) stays
// the long-lived credential.
const ClientCertValidity = 90 * 24 * time.Hour

// ErrBadCSR is wrapped by every SignCSR refusal caused by the CSR itself.
var ErrBadCSR = errors.New("bad certificate request")

// SignCSR signs a PEM CSR into a client certificate for nodeID. Only ECDSA
// P-256/P-384 keys are accepted (the agent always makes P-256), the
// signature must verify, and the subject and any SANs the CSR asks for are
// ignored: the certificate names exactly nodeID, which must be a plain
// node id, so a CSR cannot inject another identity.
func (c *CA) SignCSR(csrPEM []byte, nodeID string) ([]byte, error) {
	if !validNodeID(nodeID) {
		return nil, fmt.Errorf("%w: node id %q is not a valid certificate name", ErrBadCSR, nodeID)
	}
	blk, _ := pem.Decode(csrPEM)
	if blk == nil || blk.Type != "CERTIFICATE REQUEST" {
		return nil, fmt.Errorf("%w: csr must be a PEM CERTIFICATE REQUEST", ErrBadCSR)
	}
	csr, err := x509.ParseCertificateRequest(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadCSR, err)
	}
	if err := csr.CheckSignature(); err != nil {
		return nil, fmt.Errorf("%w: signature: %w", ErrBadCSR, err)
	}
	pub, ok := csr.PublicKey.(*ecdsa.PublicKey)
	if !ok || (pub.Curve != elliptic.P256() && pub.Curve != elliptic.P384()) {
		return nil, fmt.Errorf("%w: key must be ECDSA P-256 or P-384, not %T", ErrBadCSR, csr.PublicKey)
	}
	serial, err := newSerial()
	if err != nil {
		return nil, err
	}
	now := c.now()
	validity := c.ClientValidity
	if validity <= 0 {
		validity = ClientCertValidity
	}
	// Tolerate small clock skew between server and node, but keep the
	// allowance a small part of a short life, so that the renewal point
	// (two thirds of NotAfter-NotBefore) stays in the certificate's future.
	skew := min(5*time.Minute, validity/10)
	notAfter := now.Add(validity)
	if notAfter.After(c.Cert.NotAfter) {
		notAfter = c.Cert.NotAfter
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: nodeID, Organization: []string{"HeteroFlow agents"}},
		NotBefore: now.Add(-skew),
		NotAfter:  notAfter,
		KeyUsage:  x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.Cert, pub, c.key)
	if err != nil {
		return nil, fmt.Errorf("pki: sign: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}

// validNodeID accepts the ids agentapi mints (lowercase letters, digits,
// dashes), which rules out separators such as "/", ",", "=" or newlines
// that could make a name mean something else downstream.
func validNodeID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	return strings.Trim(id, "abcdefghijklmnopqrstuvwxyz0123456789-") == ""
}

// NodeID returns the node a verified client certificate names, refusing
// certificates not meant for client authentication.
func NodeID(cert *x509.Certificate) (string, error) {
	okUsage := false
	for _, u := range cert.ExtKeyUsage {
		if u == x509.ExtKeyUsageClientAuth {
			okUsage = true
		}
	}
	if !okUsage {
		return "", errors.New("client certificate lacks the clientAuth usage")
	}
	if !validNodeID(cert.Subject.CommonName) {
		return "", fmt.Errorf("client certificate names %q, not a node id", cert.Subject.CommonName)
	}
	return cert.Subject.CommonName, nil
}
