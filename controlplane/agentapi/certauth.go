package agentapi

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/auth"
	"github.com/heteroflow/heteroflow/controlplane/pki"
)

// certCacheTTL bounds how long a revoked node's certificate keeps working
// on this server, like auth's API-key cache (30 s by default); it keeps
// heartbeats of a large fleet off the store.
const certCacheTTL = 30 * time.Second

type certCache struct {
	mu sync.Mutex
	m  map[string]certEntry
}

type certEntry struct {
	p  *auth.Principal
	at time.Time
}

// certPrincipal maps a client certificate the TLS handshake verified
// against the agent CA to the principal the node's API key gives: same
// owner, role agent, same key prefix (so nodeOf and the audit actor work
// unchanged). The node must exist and its key be neither revoked nor
// expired, so revoking the key also ends the certificate.
func (s *Service) certPrincipal(ctx context.Context, cert *x509.Certificate) (*auth.Principal, error) {
	nodeID, err := pki.NodeID(cert)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", controlplane.ErrUnauthenticated, err)
	}
	now := s.opts.Now()
	if now.After(cert.NotAfter) {
		// Verified at the handshake, but a kept-alive connection outlives
		// it: an expired certificate is refused on every request.
		return nil, fmt.Errorf("%w: client certificate for node %s expired at %s", controlplane.ErrUnauthenticated, nodeID, cert.NotAfter.UTC().Format(time.RFC3339))
	}
	s.certs.mu.Lock()
	e, ok := s.certs.m[nodeID]
	s.certs.mu.Unlock()
	if ok && now.Sub(e.at) < certCacheTTL {
		return e.p, nil
	}
	p, err := s.loadCertPrincipal(ctx, nodeID, now)
	if err != nil {
		return nil, err
	}
	s.certs.mu.Lock()
	if s.certs.m == nil {
		s.certs.m = map[string]certEntry{}
	}
	s.certs.m[nodeID] = certEntry{p: p, at: now}
	s.certs.mu.Unlock()
	return p, nil
}

func (s *Service) loadCertPrincipal(ctx context.Context, nodeID string, now time.Time) (*auth.Principal, error) {
	refused := func(why string) error {
		return fmt.Errorf("%w: client certificate for node %s refused: %s", controlplane.ErrUnauthenticated, nodeID, why)
	}
	n, err := s.store.GetNode(ctx, nodeID)
	if errors.Is(err, controlplane.ErrNotFound) {
		return nil, refused("no such node")
	}
	if err != nil {
		return nil, fmt.Errorf("load node: %w", err)
	}
	k, err := s.store.GetAPIKeyByPrefix(ctx, n.APIKeyPrefix)
	if errors.Is(err, controlplane.ErrNotFound) {
		return nil, refused("the node has no agent key")
	}
	if err != nil {
		return nil, fmt.Errorf("load agent key: %w", err)
	}
	switch {
	case k.NodeID != nodeID || k.Role != controlplane.RoleAgent:
		return nil, refused("the node's key is not its agent key")
	case k.RevokedAt != nil:
		return nil, refused("the node's credential is revoked")
	case k.ExpiresAt != nil && !now.Before(*k.ExpiresAt):
		return nil, refused("the node's credential expired")
	}
	owner, err := s.store.GetUser(ctx, k.OwnerID)
	if err != nil || owner.Status != controlplane.UserActive {
		return nil, refused("the enrolling administrator is missing or inactive")
	}
	return &auth.Principal{UserID: k.OwnerID, Username: owner.Username, Role: k.Role, Tenant: owner.Tenant,
		APIKeyID: k.ID, APIKeyPrefix: k.Prefix, NodeID: k.NodeID}, nil
}
