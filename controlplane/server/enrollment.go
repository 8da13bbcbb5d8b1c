package server

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/heteroflow/heteroflow/controlplane/auth"
	"github.com/heteroflow/heteroflow/controlplane/httpapi"
)

// EnrollmentJSON tells the console how agents reach this server, so the
// bootstrap-token dialog can print a deploy command that works: the
// configured external URL, or else the API listener's port and scheme to
// combine with the host name the browser used.
type EnrollmentJSON struct {
	ExternalURL string `json:"external_url" doc:"configured external API URL; empty when not configured"`
	APIPort     int    `json:"api_port" doc:"port of the API listener"`
	TLS         bool   `json:"tls" doc:"the API serves HTTPS"`
	// ServerFingerprint is the SHA-256 of the server certificate (hex with
	// colons, as openssl prints it), for agents to pin a self-signed server
	// with --server-fingerprint.
	ServerFingerprint string `json:"server_fingerprint,omitempty" doc:"SHA-256 of the server certificate (openssl x509 -fingerprint -sha256 form)"`
	// SelfSigned reports a certificate that is its own issuer: the agent
	// then needs the fingerprint (or a CA file) to trust it.
	SelfSigned bool `json:"self_signed" doc:"the server certificate is self-signed"`
	// ServerPubkeyPin is curl's --pinnedpubkey form of the server key:
	// "sha256//" and the base64 SHA-256 of the certificate's
	// SubjectPublicKeyInfo. The deploy one-liner downloads with it, so a
	// self-signed server is verified by its key rather than by a CA.
	ServerPubkeyPin string `json:"server_pubkey_pin,omitempty" doc:"curl --pinnedpubkey pin of the server key: sha256// and the base64 SHA-256 of the certificate's SubjectPublicKeyInfo"`
}

type enrollmentOut struct{ Body *EnrollmentJSON }

// registerEnrollment adds GET /api/v1/server/enrollment (admins: it sits
// beside the bootstrap tokens).
func (s *Server) registerEnrollment() error {
	info := &EnrollmentJSON{ExternalURL: strings.TrimRight(s.cfg.ExternalURL, "/"), TLS: s.tls != nil}
	if _, port, err := net.SplitHostPort(s.cfg.APIAddr); err == nil {
		info.APIPort, _ = strconv.Atoi(port)
	}
	if s.tls != nil {
		c, err := readCertIdentity(s.cfg.TLS.Cert)
		if err != nil {
			return err
		}
		info.ServerFingerprint, info.SelfSigned, info.ServerPubkeyPin = c.fingerprint, c.selfSigned, c.pubkeyPin
	}
	s.enrollment = info
	httpapi.Register(s.api, huma.Operation{
		OperationID: "get-enrollment-info", Method: http.MethodGet, Path: httpapi.Prefix + "/server/enrollment",
		Summary: "How agents reach this server (deploy command) / 代理如何访问本服务器", Tags: []string{"nodes"},
	}, httpapi.Perm(auth.ResSettings, auth.ActRead), func(context.Context, *struct{}) (*enrollmentOut, error) {
		out := *s.enrollment
		if out.APIPort == 0 && s.apiLn != nil {
			// api_addr ":0" (tests): the port chosen at listen time.
			if tcp, ok := s.apiLn.Addr().(*net.TCPAddr); ok {
				out.APIPort = tcp.Port
			}
		}
		return &enrollmentOut{Body: &out}, nil
	})
	return nil
}

// certIdentity is what an agent or curl pins a server certificate by.
type certIdentity struct {
	fingerprint string // SHA-256 of the DER certificate, openssl's colon form
	pubkeyPin   string // sha256//base64(SHA-256(SubjectPublicKeyInfo))
	selfSigned  bool
}

// readCertIdentity reads the first certificate of a PEM chain.
func readCertIdentity(path string) (certIdentity, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return certIdentity{}, fmt.Errorf("tls: read %s: %w", path, err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		return certIdentity{}, fmt.Errorf("tls: %s holds no PEM certificate", path)
	}
	cert, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		return certIdentity{}, fmt.Errorf("tls: parse %s: %w", path, err)
	}
	sum := sha256.Sum256(blk.Bytes)
	parts := make([]string, len(sum))
	for i, b := range sum {
		parts[i] = fmt.Sprintf("%02X", b)
	}
	self := string(cert.RawIssuer) == string(cert.RawSubject) &&
		cert.CheckSignature(cert.SignatureAlgorithm, cert.RawTBSCertificate, cert.Signature) == nil
	return certIdentity{fingerprint: strings.Join(parts, ":"), pubkeyPin: pubkeyPin(cert), selfSigned: self}, nil
}

// pubkeyPin is curl's --pinnedpubkey value for cert: the SHA-256 of its
// DER SubjectPublicKeyInfo (what openssl x509 -pubkey | openssl pkey
// -pubin -outform der hashes), base64 standard encoding, after "sha256//".
func pubkeyPin(cert *x509.Certificate) string {
	sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
	return "sha256//" + base64.StdEncoding.EncodeToString(sum[:])
}
