package agentapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/auth"
	"github.com/heteroflow/heteroflow/controlplane/httpapi"
	"github.com/heteroflow/heteroflow/controlplane/pki"
)

// Store is what the agent API needs from persistence.
type Store interface {
	controlplane.Store
	controlplane.NodeStore
}

// Options configure a Service.
type Options struct {
	Store  Store
	Auth   *auth.Service
	Logger *slog.Logger
	// Registry receives the node metrics; nil = a private registry.
	Registry prometheus.Registerer
	// OfflineAfter is the heartbeat silence after which a node is offline
	// (default 30 s, three missed 10 s heartbeats).
	OfflineAfter time.Duration
	// MaxWait caps ?wait= of the assignment long-poll (default 60 s).
	MaxWait time.Duration
	// TokenTTL is the default lifetime of a bootstrap token (default 24 h).
	TokenTTL time.Duration
	// CA signs the CSRs of enrolling agents (mTLS); nil = mTLS off, a CSR
	// in an enroll request is then refused.
	CA  *pki.CA
	Now func() time.Time
	// Recheck: see AttachOptions.Recheck.
	Recheck time.Duration
}

// Service implements the agent and node endpoints.
type Service struct {
	store  Store
	auth   *auth.Service
	log    *slog.Logger
	m      *metrics
	notify *notifier
	opts   Options

	mu        sync.Mutex
	keyToNode map[string]string // API key prefix → node id
	certs     certCache         // node id → principal, for client certificates
}

// New builds the service.
func New(o Options) (*Service, error) {
	if o.Store == nil || o.Auth == nil {
		return nil, errors.New("agentapi: Store and Auth are required")
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Registry == nil {
		o.Registry = prometheus.NewRegistry()
	}
	if o.OfflineAfter <= 0 {
		o.OfflineAfter = 30 * time.Second
	}
	if o.MaxWait <= 0 {
		o.MaxWait = 60 * time.Second
	}
	if o.TokenTTL <= 0 {
		o.TokenTTL = 24 * time.Hour
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	m, err := newMetrics(o.Registry)
	if err != nil {
		return nil, fmt.Errorf("agentapi metrics: %w", err)
	}
	return &Service{store: o.Store, auth: o.Auth, log: o.Logger, m: m, notify: newNotifier(), opts: o,
		keyToNode: map[string]string{}}, nil
}

// Mount registers every route on api.
func (s *Service) Mount(api *httpapi.API) {
	if s.opts.CA != nil {
		api.SetClientCertAuth(s.certPrincipal)
	}
	api.SetAgentCheck(s.checkAgent)
	admin := func(act auth.Action) httpapi.Access { return httpapi.Perm(auth.ResSettings, act) }
	api.Handle(http.MethodPost, httpapi.Prefix+"/bootstrap-tokens", admin(auth.ActWrite), http.HandlerFunc(s.createToken))
	api.Handle(http.MethodGet, httpapi.Prefix+"/bootstrap-tokens", admin(auth.ActRead), http.HandlerFunc(s.listTokens))
	api.Handle(http.MethodDelete, httpapi.Prefix+"/bootstrap-tokens/{id}", admin(auth.ActWrite), http.HandlerFunc(s.deleteToken))

	api.Handle(http.MethodPost, httpapi.Prefix+"/agents/enroll", httpapi.Public, http.HandlerFunc(s.enroll))
	agent := httpapi.Perm(auth.ResNodes, auth.ActWrite).ForAgents()
	api.Handle(http.MethodPost, httpapi.Prefix+"/agents/heartbeat", agent, s.agentOnly(s.heartbeat))
	api.Handle(http.MethodGet, httpapi.Prefix+"/agents/assignments", agent, s.agentOnly(s.assignments))
	api.Handle(http.MethodPost, httpapi.Prefix+"/agents/status", agent, s.agentOnly(s.status))
	api.Handle(http.MethodPost, httpapi.Prefix+"/agents/logs", agent, s.agentOnly(s.logs))
	api.Handle(http.MethodPost, httpapi.Prefix+"/agents/certificate", agent, http.HandlerFunc(s.renewCert))

	read := httpapi.Perm(auth.ResNodes, auth.ActRead)
	write := httpapi.Perm(auth.ResNodes, auth.ActWrite).ForPeople() // operators manage nodes; agents only report
	api.Handle(http.MethodGet, httpapi.Prefix+"/nodes", read, http.HandlerFunc(s.listNodes))
	api.Handle(http.MethodGet, httpapi.Prefix+"/nodes/{id}", read, http.HandlerFunc(s.getNode))
	for _, op := range []string{"cordon", "uncordon", "drain"} {
		api.Handle(http.MethodPost, httpapi.Prefix+"/nodes/{id}/"+op, write, s.humanOnly(s.schedulingOp(op)))
	}
	api.Handle(http.MethodPost, httpapi.Prefix+"/nodes/{id}/revoke", httpapi.Perm(auth.ResNodes, auth.ActDelete).ForPeople(), s.humanOnly(http.HandlerFunc(s.revokeNode)))
	api.Handle(http.MethodPost, httpapi.Prefix+"/nodes/{id}/config", write, s.humanOnly(s.manageHandler(manageConfig)))
	api.Handle(http.MethodPost, httpapi.Prefix+"/nodes/{id}/agent-logs", write, s.humanOnly(s.manageHandler(manageLogs)))
	api.Handle(http.MethodPost, httpapi.Prefix+"/nodes/{id}/agent-status", write, s.humanOnly(s.manageHandler(manageStatus)))
	api.Handle(http.MethodGet, httpapi.Prefix+"/nodes/{id}/management/{mid}", write, s.humanOnly(http.HandlerFunc(s.getManagement)))
	api.Handle(http.MethodPost, httpapi.Prefix+"/tasks/{id}/assign", write, s.humanOnly(http.HandlerFunc(s.assignHandler)))
	api.Handle(http.MethodGet, httpapi.Prefix+"/tasks/{id}/logs", httpapi.Perm(auth.ResTasks, auth.ActRead), http.HandlerFunc(s.taskLogs))
	document(api)
}

// Run keeps node states and cancels in step with the ledger until ctx ends:
// nodes silent for OfflineAfter go offline, and runs the ledger stopped are
// turned into cancel items for their agents.
func (s *Service) Run(ctx context.Context) {
	offline := time.NewTicker(max(s.opts.OfflineAfter/6, 100*time.Millisecond))
	sweep := time.NewTicker(time.Second)
	defer offline.Stop()
	defer sweep.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-offline.C:
			s.markOffline(ctx)
		case <-sweep.C:
			s.sweepStops(ctx)
		}
	}
}

func (s *Service) markOffline(ctx context.Context) {
	ids, err := s.store.MarkNodesOffline(ctx, s.opts.Now().Add(-s.opts.OfflineAfter))
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("mark nodes offline", "err", err)
		}
		return
	}
	for _, id := range ids {
		s.log.Info("node offline", "node", id)
		s.setUp(ctx, id, 0)
	}
}

func (s *Service) setUp(ctx context.Context, id string, v float64) {
	host := ""
	if n, err := s.store.GetNode(ctx, id); err == nil {
		host = n.Hostname
	}
	s.m.up.WithLabelValues(id, host).Set(v)
}

// nodeOf returns the node an agent's API key belongs to.
func (s *Service) nodeOf(r *http.Request) (string, error) {
	p := httpapi.PrincipalFrom(r.Context())
	if p == nil || p.Role != controlplane.RoleAgent || p.APIKeyPrefix == "" {
		return "", fmt.Errorf("%w: only a node agent's API key may call this", controlplane.ErrForbidden)
	}
	s.mu.Lock()
	id, ok := s.keyToNode[p.APIKeyPrefix]
	s.mu.Unlock()
	if ok {
		return id, nil
	}
	k, err := s.store.GetAPIKeyByPrefix(r.Context(), p.APIKeyPrefix)
	if err != nil {
		return "", err
	}
	if k.NodeID == "" {
		return "", fmt.Errorf("%w: this agent key is not bound to a node", controlplane.ErrForbidden)
	}
	s.mu.Lock()
	s.keyToNode[p.APIKeyPrefix] = k.NodeID
	s.mu.Unlock()
	return k.NodeID, nil
}

type nodeHandler func(w http.ResponseWriter, r *http.Request, node string)

// agentOnly resolves the caller's node and keeps agent chatter (heartbeats,
// polls) out of the audit log, which would otherwise grow by a row per
// node every few seconds.
func (s *Service) agentOnly(h nodeHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		httpapi.SkipAudit(r.Context())
		node, err := s.nodeOf(r)
		if err != nil {
			httpapi.WriteError(w, r, s.log, err)
			return
		}
		h(w, r, node)
	})
}

// humanOnly refuses agent keys on node management: nodes:write lets an
// agent report about itself, not cordon its neighbours.
func (s *Service) humanOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := httpapi.PrincipalFrom(r.Context()); p != nil && p.Role == controlplane.RoleAgent {
			httpapi.WriteError(w, r, s.log, fmt.Errorf("%w: agent keys cannot manage nodes", controlplane.ErrForbidden))
			return
		}
		h.ServeHTTP(w, r)
	})
}

func trimmed(s string) string { return strings.TrimSpace(s) }
