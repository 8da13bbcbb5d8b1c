package daemon

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/heteroflow/heteroflow/agent/credentials"
	"github.com/heteroflow/heteroflow/agent/protocol"
)

// The client certificate renews itself: once two thirds of its life
// (NotBefore..NotAfter) have passed, the agent makes a fresh key, sends a
// CSR for it with its current credential and switches to the answer —
// new handshakes present the new certificate at once, the files are
// replaced for the next start and for the collector (which re-reads them).
// The old certificate is not revoked and stays valid until it expires, so
// a failed renewal is retried (every minute, at most a tenth of the life)
// while the old one still works.

// certHolder is the client certificate presented on new connections.
type certHolder struct {
	p atomic.Pointer[tls.Certificate]
}

func newCertHolder(c *tls.Certificate) *certHolder {
	h := &certHolder{}
	h.p.Store(c)
	return h
}

func (h *certHolder) get(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	return h.p.Load(), nil
}

// leaf is the current certificate, parsed.
func (h *certHolder) leaf() (*x509.Certificate, error) {
	c := h.p.Load()
	if c.Leaf != nil {
		return c.Leaf, nil
	}
	return x509.ParseCertificate(c.Certificate[0])
}

// renewAt is when a certificate is due for renewal: two thirds into its life.
func renewAt(leaf *x509.Certificate) time.Time {
	life := leaf.NotAfter.Sub(leaf.NotBefore)
	return leaf.NotBefore.Add(life * 2 / 3)
}

// certRenewLoop renews the client certificate when it is due until ctx ends.
func (a *Agent) certRenewLoop(ctx context.Context) {
	if a.cert == nil {
		return
	}
	for {
		leaf, err := a.cert.leaf()
		if err != nil {
			a.cfg.Logger.Error("client certificate unreadable; renewal stopped", "err", err)
			return
		}
		wait := time.Until(renewAt(leaf))
		if wait > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
		}
		if err := a.renewCert(ctx); err != nil {
			retry := min(time.Minute, leaf.NotAfter.Sub(leaf.NotBefore)/10)
			a.cfg.Logger.Warn("client certificate renewal failed, retrying / 客户端证书续期失败，将重试", "err", err,
				"expires", leaf.NotAfter, "retry_in", retry)
			select {
			case <-ctx.Done():
				return
			case <-time.After(retry):
			}
		}
	}
}

// renewCert trades a CSR for a fresh key for a new certificate and
// switches to it.
func (a *Agent) renewCert(ctx context.Context) error {
	host, _ := os.Hostname()
	keyPEM, csr, err := credentials.NewKeyAndCSR(host)
	if err != nil {
		return err
	}
	var resp protocol.CertRenewResponse
	if err := a.cl.do(ctx, "POST", "/api/v1/agents/certificate", protocol.CertRenewRequest{CSR: string(csr)}, &resp); err != nil {
		return err
	}
	if resp.Certificate == "" {
		return errors.New("the server answered no certificate")
	}
	if err := credentials.SaveCert(a.cfg.DataDir, []byte(resp.Certificate), keyPEM, []byte(resp.CABundle)); err != nil {
		return err
	}
	c, err := tls.X509KeyPair([]byte(resp.Certificate), keyPEM)
	if err != nil {
		return fmt.Errorf("renewed certificate: %w", err)
	}
	a.cert.p.Store(&c)
	a.cl.srv.closeIdle()
	a.renewals.Add(1)
	a.cfg.Logger.Info("client certificate renewed / 客户端证书已续期", "not_after", resp.NotAfter)
	return nil
}
