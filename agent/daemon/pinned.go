package daemon

import (
	"context"
	"crypto/tls"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"time"
)

// PinnedCertFile is where the agent keeps the server certificate its
// --server-fingerprint pin accepted, in its data folder.
const PinnedCertFile = "server-pinned.pem"

// pinnedServerCA gives the embedded collector the trust the pin gives the
// agent's own client: the collector's exporter takes only CA files, so the
// agent fetches the server's certificate through a handshake that checks
// the pin and writes it as a PEM file the exporter trusts (a self-signed
// certificate is its own root). It returns "" when there is no pin, a CA
// file is configured, or the certificate cannot be fetched (logged;
// metrics then fail verification, the control link is unaffected).
func (a *Agent) pinnedServerCA(ctx context.Context) string {
	pin := a.cfg.ServerFingerprint
	if pin == "" {
		pin = a.creds.ServerFingerprint
	}
	if pin == "" || a.cfg.CAFile != "" {
		return ""
	}
	path, err := writePinnedCert(ctx, a.cfg, pin)
	if err != nil {
		a.cfg.Logger.Warn("collector: cannot trust the pinned server certificate for metrics", "err", err)
		return ""
	}
	return path
}

// writePinnedCert connects to cfg.Server, checks the server certificate
// against pin (tlsConfig's check), and stores that certificate in PEM.
func writePinnedCert(ctx context.Context, cfg Config, pin string) (string, error) {
	tc, err := cfg.tlsConfig(pin, nil, nil)
	if err != nil {
		return "", err
	}
	if tc == nil {
		return "", errors.New("a pinned fingerprint needs an https:// server")
	}
	u, err := url.Parse(cfg.Server)
	if err != nil {
		return "", fmt.Errorf("server URL: %w", err)
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "443")
	}
	tc.ServerName = u.Hostname()
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := (&tls.Dialer{Config: tc}).DialContext(dctx, "tcp", addr)
	if err != nil {
		return "", fmt.Errorf("fetch the server certificate from %s: %w", addr, err)
	}
	defer conn.Close()
	certs := conn.(*tls.Conn).ConnectionState().PeerCertificates
	if len(certs) == 0 {
		return "", errors.New("server sent no certificate")
	}
	path := filepath.Join(cfg.DataDir, PinnedCertFile)
	b := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: certs[0].Raw})
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return "", fmt.Errorf("store the pinned certificate: %w", err)
	}
	return path, nil
}
