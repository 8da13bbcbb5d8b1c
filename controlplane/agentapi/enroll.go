package agentapi

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/heteroflow/heteroflow/agent/protocol"
	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/auth"
	"github.com/heteroflow/heteroflow/controlplane/httpapi"
)

// enroll exchanges a one-time bootstrap token for a node id and an agent
// API key. Order matters: the key is minted first and the token consumed
// with the node insert in one transaction; if that loses a race (token
// used meanwhile) the fresh key is revoked, so a token never yields two
// working credentials.
func (s *Service) enroll(w http.ResponseWriter, r *http.Request) {
	var req protocol.EnrollRequest
	if err := decode(r, &req); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	httpapi.SetAudit(r.Context(), "node.enroll", "")
	httpapi.SetAuditModule(r.Context(), controlplane.ModuleAgent)
	req.Hostname = trimmed(req.Hostname)
	switch {
	case !strings.HasPrefix(req.Token, tokenPrefix):
		httpapi.WriteError(w, r, s.log, fmt.Errorf("%w: a bootstrap token (hfb_…) is required", controlplane.ErrUnauthenticated))
		return
	case req.Hostname == "" || len(req.Hostname) > 253:
		httpapi.WriteError(w, r, s.log, controlplane.Invalidf("hostname must be 1–253 characters"))
		return
	}
	hash := auth.HashSecret(req.Token)
	tok, err := s.store.GetBootstrapTokenByHash(r.Context(), hash)
	if errors.Is(err, controlplane.ErrNotFound) {
		httpapi.WriteError(w, r, s.log, fmt.Errorf("%w: unknown bootstrap token", controlplane.ErrUnauthenticated))
		return
	}
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	if tok.UsedAt != nil || !s.opts.Now().Before(tok.ExpiresAt) {
		httpapi.WriteError(w, r, s.log, fmt.Errorf("%w: bootstrap token already used or expired", controlplane.ErrUnauthenticated))
		return
	}
	creator, err := s.store.GetUser(r.Context(), tok.CreatedBy)
	if err != nil {
		httpapi.WriteError(w, r, s.log, fmt.Errorf("%w: the token's creator no longer exists", controlplane.ErrUnauthenticated))
		return
	}
	nodeID, err := newNodeID(req.Hostname)
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	// Sign before anything is stored: a bad CSR must not consume the token.
	// Without mTLS a CSR is ignored and the answer carries no certificate,
	// which tells the agent to discard its key: agents over HTTPS always
	// send one because they cannot know beforehand.
	var certPEM []byte
	if req.CSR != "" && s.opts.CA != nil {
		if certPEM, err = s.opts.CA.SignCSR([]byte(req.CSR), nodeID); err != nil {
			httpapi.WriteError(w, r, s.log, controlplane.Invalidf("csr: %v", err))
			return
		}
	}
	owner := &auth.Principal{UserID: creator.ID, Username: creator.Username, Role: creator.Role, Tenant: creator.Tenant}
	key, k, err := s.auth.CreateAPIKey(r.Context(), owner, "agent "+nodeID, controlplane.RoleAgent, nodeID, nil)
	if err != nil {
		httpapi.WriteError(w, r, s.log, fmt.Errorf("mint agent key: %w", err))
		return
	}
	n := &controlplane.Node{ID: nodeID, Hostname: req.Hostname, OS: req.OS, Arch: req.Arch, Version: req.Version,
		Labels: req.Labels, Inventory: req.Inventory, Health: "ok", APIKeyPrefix: k.Prefix}
	if err := s.store.EnrollNode(r.Context(), hash, n); err != nil {
		if rerr := s.auth.RevokeAPIKey(r.Context(), k); rerr != nil {
			s.log.Error("revoke key of failed enrollment", "prefix", k.Prefix, "err", rerr)
		}
		if errors.Is(err, controlplane.ErrConflict) {
			err = fmt.Errorf("%w: bootstrap token already used or expired", controlplane.ErrUnauthenticated)
		}
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	httpapi.SetAudit(r.Context(), "node.enroll", "node/"+nodeID)
	s.setUp(r.Context(), nodeID, 1)
	s.log.Info("node enrolled", "node", nodeID, "hostname", req.Hostname, "devices", deviceCount(n))
	resp := protocol.EnrollResponse{NodeID: nodeID, APIKey: key}
	if certPEM != nil {
		resp.Certificate, resp.CABundle = string(certPEM), string(s.opts.CA.CertPEM)
	}
	writeJSON(w, http.StatusCreated, resp)
}

// newNodeID is the hostname (sanitised) plus a random suffix, so two
// machines with the same hostname stay apart and ids stay readable.
func newNodeID(host string) (string, error) {
	var b strings.Builder
	for _, c := range strings.ToLower(host) {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-':
			b.WriteRune(c)
		case c == '.' || c == '_':
			b.WriteRune('-')
		}
		if b.Len() >= 40 {
			break
		}
	}
	suffix := make([]byte, 3)
	if _, err := rand.Read(suffix); err != nil {
		return "", fmt.Errorf("random: %w", err)
	}
	base := strings.Trim(b.String(), "-")
	if base == "" {
		base = "node"
	}
	return base + "-" + hex.EncodeToString(suffix), nil
}

func deviceCount(n *controlplane.Node) int {
	c := 0
	for _, s := range n.Inventory {
		c += len(s.Devices)
	}
	return c
}
