package agentapi

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/heteroflow/heteroflow/agent/protocol"
	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/auth"
	"github.com/heteroflow/heteroflow/controlplane/httpapi"
)

// Certificate renewal and revocation.
//
// An agent renews its client certificate itself, with the credential it
// holds (its current certificate, or its key): it sends a CSR for a fresh
// key once two thirds of the certificate's life have passed and switches
// to the answer; the old certificate is not revoked and stays valid until
// it expires, so requests in flight on old connections finish. A node is
// revoked by revoking its agent key (POST /nodes/{id}/revoke, or the key
// itself): every agent request re-reads the key (checkAgent), so the next
// request is refused whichever credential it carries, and a waiting
// long-poll is woken and answered 401.

// renewCert signs a new client certificate for the calling node.
func (s *Service) renewCert(w http.ResponseWriter, r *http.Request) {
	httpapi.SetAuditModule(r.Context(), controlplane.ModuleAgent)
	node, err := s.nodeOf(r)
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	httpapi.SetAudit(r.Context(), "node.cert-renew", "node/"+node)
	if s.opts.CA == nil {
		httpapi.WriteError(w, r, s.log, controlplane.InvalidCode("mtls_off", nil, "this server does not sign agent certificates (tls.mtls is off)"))
		return
	}
	var req protocol.CertRenewRequest
	if err := decode(r, &req); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	certPEM, err := s.opts.CA.SignCSR([]byte(req.CSR), node)
	if err != nil {
		httpapi.WriteError(w, r, s.log, controlplane.InvalidCode("bad_csr", []string{"detail", err.Error()}, "csr: %v", err))
		return
	}
	blk, _ := pem.Decode(certPEM)
	cert, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	s.log.Info("agent certificate renewed", "node", node, "not_after", cert.NotAfter)
	writeJSON(w, http.StatusOK, protocol.CertRenewResponse{Certificate: string(certPEM), CABundle: string(s.opts.CA.CertPEM), NotAfter: cert.NotAfter})
}

// errRevoked is the answer to a revoked node.
func errRevoked(node string) error {
	return fmt.Errorf("%w: node %s is revoked: enroll it again with a new bootstrap token", controlplane.ErrUnauthenticated, node)
}

// checkAgent is the API's per-request check of an agent (httpapi.AgentCheck):
// its key, read from the store now, must be neither revoked nor expired.
// One indexed read per agent request; the caches in front of it (API keys,
// certificates) only save the hashing and the owner lookup.
func (s *Service) checkAgent(ctx context.Context, p *auth.Principal) error {
	k, err := s.store.GetAPIKeyByPrefix(ctx, p.APIKeyPrefix)
	if errors.Is(err, controlplane.ErrNotFound) {
		return errRevoked(p.NodeID)
	}
	if err != nil {
		return fmt.Errorf("load agent key: %w", err)
	}
	if k.RevokedAt != nil || (k.ExpiresAt != nil && !s.opts.Now().Before(*k.ExpiresAt)) {
		return errRevoked(k.NodeID)
	}
	return nil
}

// revokeNode revokes the node's agent key and cordons the node: its agent
// is refused from its next request on (its open long-poll is answered
// 401 now) and no task is placed there. The node stays listed, with its
// history; enrolling the machine again makes a new node.
func (s *Service) revokeNode(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	httpapi.SetAudit(r.Context(), "node.revoke", "node/"+id)
	n, err := s.store.GetNode(r.Context(), id)
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	k, err := s.store.GetAPIKeyByPrefix(r.Context(), n.APIKeyPrefix)
	if err == nil && k.RevokedAt == nil {
		err = s.auth.RevokeAPIKey(r.Context(), k)
	}
	if err != nil && !errors.Is(err, controlplane.ErrNotFound) {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	s.certs.mu.Lock()
	delete(s.certs.m, id)
	s.certs.mu.Unlock()
	if n, err = s.store.SetNodeScheduling(r.Context(), id, true, false); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	s.notify.Revoke(id) // wakes the node's long-polls, which re-check and end
	s.log.Info("node revoked", "node", id)
	writeJSON(w, http.StatusOK, toNodeJSON(n))
}
