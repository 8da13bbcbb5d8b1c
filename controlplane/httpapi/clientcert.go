package httpapi

import (
	"context"
	"crypto/x509"
	"fmt"
	"net/http"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/auth"
)

// ClientCertAuth resolves a client certificate that the TLS handshake has
// already verified against the configured CA into a principal. It returns
// an error wrapping controlplane.ErrUnauthenticated when the certificate
// names no valid identity (unknown or revoked node, for one).
type ClientCertAuth func(ctx context.Context, cert *x509.Certificate) (*auth.Principal, error)

// SetClientCertAuth installs f as the resolver of client certificates; the
// agent API installs one mapping a node certificate to that node's agent
// principal. Call it before the server starts serving.
func (a *API) SetClientCertAuth(f ClientCertAuth) { a.certAuth.Store(&f) }

var errAgentCertRequired = fmt.Errorf("%w: this server requires node agents to present their client certificate (tls.require_agent_cert); "+
	"an agent API key alone is refused — re-enroll the node or configure its certificate", controlplane.ErrUnauthenticated)

// verifiedClientCert is the leaf of the first verified chain, nil when the
// connection is plain HTTP or the client presented no certificate. Only
// verified chains count: PeerCertificates alone would trust anything.
func verifiedClientCert(r *http.Request) *x509.Certificate {
	if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 || len(r.TLS.VerifiedChains[0]) == 0 {
		return nil
	}
	return r.TLS.VerifiedChains[0][0]
}

func (a *API) certPrincipal(ctx context.Context, cert *x509.Certificate) (*auth.Principal, error) {
	f := a.certAuth.Load()
	if f == nil {
		return nil, fmt.Errorf("%w: client certificates are not accepted here", controlplane.ErrUnauthenticated)
	}
	return (*f)(ctx, cert)
}

// AgentCheck re-checks, on every request of a node agent, that its
// credential still stands (the node not revoked), reading the store: API
// key and certificate caches would otherwise let a revoked node in for up
// to their TTL.
type AgentCheck func(ctx context.Context, p *auth.Principal) error

// SetAgentCheck installs f; the agent API installs one.
func (a *API) SetAgentCheck(f AgentCheck) { a.agentCheck.Store(&f) }

func (a *API) checkAgent(ctx context.Context, p *auth.Principal) error {
	if p == nil || p.Role != controlplane.RoleAgent {
		return nil
	}
	if f := a.agentCheck.Load(); f != nil {
		return (*f)(ctx, p)
	}
	return nil
}
