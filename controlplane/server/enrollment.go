package server

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
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
		fp, self, err := certFingerprint(s.cfg.TLS.Cert)
		if err != nil {
			return err
		}
		info.ServerFingerprint, info.SelfSigned = fp, self
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

// certFingerprint reads the first certificate of a PEM chain.
func certFingerprint(path string) (string, bool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", false, fmt.Errorf("tls: read %s: %w", path, err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		return "", false, fmt.Errorf("tls: %s holds no PEM certificate", path)
	}
	cert, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		return "", false, fmt.Errorf("tls: parse %s: %w", path, err)
	}
	sum := sha256.Sum256(blk.Bytes)
	parts := make([]string, len(sum))
	for i, b := range sum {
		parts[i] = fmt.Sprintf("%02X", b)
	}
	self := string(cert.RawIssuer) == string(cert.RawSubject) &&
		cert.CheckSignature(cert.SignatureAlgorithm, cert.RawTBSCertificate, cert.Signature) == nil
	return strings.Join(parts, ":"), self, nil
}
