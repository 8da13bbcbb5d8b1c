package hub

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/heteroflow/heteroflow/controlplane/client"
)

// pin is how the hub trusts a member's TLS certificate.
type pin struct {
	caPEM       string // the CA that signed it, instead of the system roots
	fingerprint string // SHA-256 of the certificate itself, lowercase hex
}

// normalizeFingerprint accepts hex with or without colons, any case.
func normalizeFingerprint(fp string) (string, error) {
	fp = strings.ToLower(strings.NewReplacer(":", "", " ", "").Replace(strings.TrimSpace(fp)))
	if fp == "" {
		return "", nil
	}
	if b, err := hex.DecodeString(fp); err != nil || len(b) != sha256.Size {
		return "", invalid(CodeCAInvalid, []string{"detail", "fingerprint"},
			"fingerprint must be the SHA-256 of the member's certificate: 64 hex digits, colons allowed")
	}
	return fp, nil
}

// checkURL accepts an absolute http(s) URL without query, fragment or
// credentials: the URL is shown to every user of the hub, and the API key
// is the member's only credential.
func checkURL(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err == nil && u.User != nil {
		shown := u.Redacted()
		return "", invalid(CodeURLInvalid, []string{"url", shown}, "cluster url %q must not carry a user or password: the API key is the member's credential", shown)
	}
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return "", invalid(CodeURLInvalid, []string{"url", raw}, "cluster url %q must be an http:// or https:// address such as https://east.example.com:3333", raw)
	}
	return strings.TrimRight(u.String(), "/"), nil
}

// tlsConfig trusts the pinned CA, or exactly the certificate with the
// pinned fingerprint, or (neither) the system roots.
func (p pin) tlsConfig() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	switch {
	case p.fingerprint != "":
		want, _ := hex.DecodeString(p.fingerprint)
		// The chain is not verified against roots: the pin is the trust.
		cfg.InsecureSkipVerify = true //nolint:gosec // verified by VerifyPeerCertificate below
		cfg.VerifyPeerCertificate = func(raw [][]byte, _ [][]*x509.Certificate) error {
			if len(raw) == 0 {
				return errors.New("the member presented no certificate")
			}
			got := sha256.Sum256(raw[0])
			if !bytes.Equal(got[:], want) {
				return fmt.Errorf("the member's certificate has SHA-256 %x, not the pinned fingerprint", got)
			}
			return nil
		}
	case p.caPEM != "":
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(p.caPEM)) {
			return nil, invalid(CodeCAInvalid, []string{"detail", "ca_pem"}, "ca_pem holds no PEM certificate")
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}

// dial returns a client for a member with its key and TLS pin.
func dial(base, apiKey string, p pin, timeout time.Duration) (*client.Client, *http.Transport, error) {
	tc, err := p.tlsConfig()
	if err != nil {
		return nil, nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tc
	tr.Proxy = nil // members are addressed directly
	c, err := client.New(base, &http.Client{Transport: tr, Timeout: timeout})
	if err != nil {
		return nil, nil, invalid(CodeURLInvalid, []string{"url", base}, "%v", err)
	}
	return c.WithAPIKey(apiKey), tr, nil
}

// checkMember verifies a member before it is registered: it answers, the
// key is valid and may read what the hub reads (admin or operator: only
// they see the version), and its version is compatible with the hub's.
// It returns the member's version.
func checkMember(ctx context.Context, c *client.Client, name, base, hubVersion string) (string, error) {
	if _, err := c.Me(ctx); err != nil {
		return "", memberError(err, name, base)
	}
	h, err := c.HealthAuthed(ctx)
	var ae *client.Error
	if errors.As(err, &ae) && ae.Status == http.StatusServiceUnavailable {
		err = nil // degraded still answers with the version
	}
	if err != nil {
		return "", memberError(err, name, base)
	}
	if h.Version == "" {
		return "", invalid(CodeKeyRole, []string{"name", name},
			"the API key of cluster %s is valid but is not an admin or operator key (the hub reads nodes, alerts and usage and places tasks with it)", name)
	}
	if !compatible(hubVersion, h.Version) {
		return "", invalid(CodeVersionMismatch, []string{"name", name, "version", h.Version, "hub_version", hubVersion},
			"cluster %s runs version %s, the hub %s: major and minor versions must match", name, h.Version, hubVersion)
	}
	return h.Version, nil
}

// memberError turns a failed call to a member into the registration's
// coded error: a refused key, an untrusted certificate or no answer.
func memberError(err error, name, base string) error {
	var ae *client.Error
	if errors.As(err, &ae) {
		if ae.Status == http.StatusUnauthorized || ae.Status == http.StatusForbidden {
			return invalid(CodeKeyRejected, []string{"name", name}, "cluster %s refused the API key (%s)", name, ae.Code)
		}
		return invalid(CodeUnreachable, []string{"name", name, "url", base, "detail", ae.Error()},
			"cluster %s at %s did not answer as a HeteroFlow server: %v", name, base, ae)
	}
	var ue x509.UnknownAuthorityError
	var he x509.HostnameError
	var ce x509.CertificateInvalidError
	msg := err.Error()
	if errors.As(err, &ue) || errors.As(err, &he) || errors.As(err, &ce) || strings.Contains(msg, "pinned fingerprint") ||
		strings.Contains(msg, "certificate") {
		return invalid(CodeTLSUntrusted, []string{"name", name, "url", base, "detail", msg},
			"the TLS certificate of cluster %s at %s is not trusted: %v", name, base, err)
	}
	return invalid(CodeUnreachable, []string{"name", name, "url", base, "detail", msg},
		"cannot reach cluster %s at %s: %v", name, base, err)
}

// compatible reports whether two versions share major and minor
// ("v1.4.2" and "1.4.0" do); versions that are not numbered must be equal.
func compatible(a, b string) bool {
	ma, oka := majorMinor(a)
	mb, okb := majorMinor(b)
	if oka && okb {
		return ma == mb
	}
	return a == b
}

func majorMinor(v string) (string, bool) {
	v = strings.TrimPrefix(v, "v")
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return "", false
	}
	for _, p := range parts[:2] {
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return "", false
		}
	}
	return parts[0] + "." + parts[1], true
}
