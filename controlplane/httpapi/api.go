package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humachi"
	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/auth"
	"github.com/heteroflow/heteroflow/controlplane/auth/oidcauth"
)

// Prefix is where the versioned REST API lives.
const Prefix = "/api/v1"

// DefaultMaxBodyBytes caps request bodies (1 MiB) unless Options say otherwise.
const DefaultMaxBodyBytes = 1 << 20

// Options are the API's dependencies.
type Options struct {
	Store   controlplane.Store
	Auth    *auth.Service
	Auditor *Auditor
	Logger  *slog.Logger
	// Registry receives the API's HTTP metrics and is served at /metrics;
	// later subsystems register their collectors on the same registry.
	Registry     *prometheus.Registry
	CORSOrigins  []string
	MaxBodyBytes int64
	Version      string
	// AllowRegistration is the self-registration default while no admin
	// has changed the stored setting.
	AllowRegistration bool
	// GrafanaURL is served to the console by GET /api/v1/settings/links.
	GrafanaURL string
	// RequireAgentCert refuses agent API keys presented without a verified
	// client certificate (tls.require_agent_cert).
	RequireAgentCert bool
	// RateLimits is the per-caller request budget; the zero value turns
	// it off (tests), servers pass their configuration.
	RateLimits RateLimits
	// OIDC signs users in at OpenID providers; nil: none configured.
	OIDC *oidcauth.RP
	Now  func() time.Time
}

// API is the HTTP handler of the control plane.
type API struct {
	store   controlplane.Store
	auth    *auth.Service
	auditor *Auditor
	log     *slog.Logger
	reg     *prometheus.Registry
	now     func() time.Time
	opts    Options
	router  chi.Router
	huma    huma.API

	mu          sync.Mutex
	routes      []Route
	streams     map[string]bool // paths mounted with HandleStream
	healthState healthState
	admissions  []TaskAdmission // see AddTaskAdmission
	// certAuth resolves verified client certificates (see SetClientCertAuth).
	certAuth atomic.Pointer[ClientCertAuth]
	// agentCheck re-checks agents per request (see SetAgentCheck).
	agentCheck atomic.Pointer[AgentCheck]
	// pools caches the nodes of dedicated pools for VisibilityOf.
	pools poolCache
}

// Route is one registered endpoint and who may call it. Routes() lists
// them all so that tests (the permission matrix) cover every endpoint.
type Route struct {
	Method string
	Path   string // chi pattern, e.g. /api/v1/tasks/{id}; a mounted subtree ends in /*
	Access Access
}

// New builds the API with its built-in routes.
func New(o Options) (*API, error) {
	if o.Store == nil || o.Auth == nil || o.Auditor == nil {
		return nil, errors.New("httpapi: Store, Auth and Auditor are required")
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Registry == nil {
		o.Registry = prometheus.NewRegistry()
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	a := &API{store: o.Store, auth: o.Auth, auditor: o.Auditor, log: o.Logger, reg: o.Registry, now: o.Now, opts: o}
	metrics, err := newHTTPMetrics(o.Registry)
	if err != nil {
		return nil, err
	}

	r := chi.NewRouter()
	r.Use(Recoverer(a.log), RequestID, SecurityHeaders(APICSP), CORS(o.CORSOrigins),
		metrics.middleware, AccessLog(a.log), BodyLimit(o.MaxBodyBytes, a.ownsBodyLimit), a.authenticate, a.rateLimit, a.auditMutations)
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		writeAPIError(w, r, newAPIError(http.StatusNotFound, "no route for "+r.Method+" "+r.URL.Path))
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		writeAPIError(w, r, newAPIError(http.StatusMethodNotAllowed, "method "+r.Method+" not allowed on "+r.URL.Path))
	})
	a.router = r

	cfg := huma.DefaultConfig("HeteroFlow control plane API", o.Version)
	cfg.OpenAPIPath = Prefix + "/openapi"
	cfg.DocsPath = ""    // the docs UI loads scripts from a CDN, which our CSP forbids
	cfg.SchemasPath = "" // and no $schema links in bodies: the contract has none
	cfg.CreateHooks = nil
	cfg.Info.Description = "REST API of HeteroFlow. Errors are always {\"error\":{\"code\",\"message\"}}."
	cfg.Components.SecuritySchemes = map[string]*huma.SecurityScheme{
		"bearer": {Type: "http", Scheme: "bearer", Description: "Access JWT from /auth/login, or an API key hf_<prefix>_<secret>"},
	}
	a.huma = humachi.New(r, cfg)
	a.record(http.MethodGet, cfg.OpenAPIPath+".json", Public)

	a.Handle(http.MethodGet, "/health", Public, http.HandlerFunc(a.healthReady))
	a.Handle(http.MethodGet, "/health/ready", Public, http.HandlerFunc(a.healthReady))
	a.Handle(http.MethodGet, "/health/live", Public, http.HandlerFunc(a.healthLive))
	// The server's own metrics name routes, users' request rates and
	// build details: readable with metrics:read only, narrowed to the
	// caller's tenants below operator (scrapers use an API key;
	// server.metrics_addr serves them unauthenticated on a separate listener).
	a.Handle(http.MethodGet, "/metrics", Perm(auth.ResMetrics, auth.ActRead), a.selfMetrics(o.Registry))
	a.Document(http.MethodGet, "/health", Doc{ID: "health", Summary: "Readiness (as /health/ready)", Tags: []string{"server"}, Response: HealthJSON{}, Errors: []int{503}})
	a.Document(http.MethodGet, "/health/ready", Doc{ID: "health-ready", Summary: "Readiness: the store answers a read and takes a write; anonymous callers see only ok/degraded",
		Tags: []string{"server"}, Response: HealthJSON{}, Errors: []int{503}})
	a.Document(http.MethodGet, "/health/live", Doc{ID: "health-live", Summary: "Liveness: the process serves HTTP", Tags: []string{"server"}, Response: HealthJSON{}})
	a.Document(http.MethodGet, "/metrics", Doc{ID: "server-metrics", Summary: "The server's own metrics in the Prometheus text format (needs metrics:read)", Tags: []string{"server"}, ResponseType: "text/plain"})
	a.registerAuth()
	a.registerOIDC()
	a.registerUsers()
	a.registerSettings()
	a.registerLinks()
	a.registerAPIKeys()
	a.registerTasks()
	a.registerAudit()
	a.registerTenants()
	return a, nil
}

// ServeHTTP makes the API an http.Handler.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.router.ServeHTTP(w, r) }

// Huma exposes the huma API so other packages can add documented operations
// with Register.
func (a *API) Huma() huma.API { return a.huma }

// Registry is the Prometheus registry served at /metrics.
func (a *API) Registry() *prometheus.Registry { return a.reg }

// Logger is the API's logger, for handlers mounted by other packages.
func (a *API) Logger() *slog.Logger { return a.log }

// Routes lists every registered endpoint, sorted by path then method.
func (a *API) Routes() []Route {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := append([]Route(nil), a.routes...)
	sort.Slice(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].Method < out[j].Method
	})
	return out
}

func (a *API) record(method, path string, acc Access) {
	a.mu.Lock()
	a.routes = append(a.routes, Route{Method: method, Path: path, Access: acc})
	a.mu.Unlock()
}

// Handle mounts a plain net/http handler at pattern (a full path, e.g.
// "/api/v1/nodes/{id}/heartbeat") behind acc. Request IDs, logs, metrics,
// CORS, size limits, authentication and auditing of mutations apply.
func (a *API) Handle(method, pattern string, acc Access, h http.Handler) {
	a.router.With(a.Require(acc)).Method(method, pattern, h)
	a.record(method, pattern, acc)
}

// HandleStream is Handle for handlers that read large bodies and enforce
// their own size cap (413) and overload answers, such as metrics ingest: the
// API's body limit does not apply, and requests are not written to the
// audit log (a push every few seconds per node would drown it).
func (a *API) HandleStream(method, pattern string, acc Access, h http.Handler) {
	a.mu.Lock()
	if a.streams == nil {
		a.streams = map[string]bool{}
	}
	a.streams[pattern] = true
	a.mu.Unlock()
	a.Handle(method, pattern, acc, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		SkipAudit(r.Context())
		h.ServeHTTP(w, r)
	}))
}

// ownsBodyLimit reports whether path was mounted with HandleStream.
func (a *API) ownsBodyLimit(path string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.streams[path]
}

// Mount attaches a subtree (e.g. "/prometheus" for the query API) behind
// acc for every method.
func (a *API) Mount(pattern string, acc Access, h http.Handler) {
	a.router.With(a.Require(acc)).Mount(pattern, h)
	a.record("*", pattern+"/*", acc)
}

// auditMeta is the huma.Operation Metadata key naming the audit action of a
// mutating operation (e.g. "task.cancel"); without it the action is
// "<METHOD> <route pattern>".
const auditMeta = "audit"

// Audited returns Metadata naming op's audit action.
func Audited(action string) map[string]any { return map[string]any{auditMeta: action} }

// Register adds a documented huma operation guarded by acc. Handler errors
// are mapped to the API's error shape through the one status table.
func Register[I, O any](a *API, op huma.Operation, acc Access, h func(context.Context, *I) (*O, error)) {
	if op.OperationID == "" {
		panic("httpapi: operation needs an OperationID")
	}
	if !acc.Public {
		op.Security = []map[string][]string{{"bearer": {}}}
		op.Description += fmt.Sprintf("\n\nRequires: %s.", acc)
	}
	op.MaxBodyBytes = a.opts.MaxBodyBytes + 1 // BodyLimit enforces the real cap first
	op.Errors = append(op.Errors, http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden)
	action, _ := op.Metadata[auditMeta].(string)
	op.Middlewares = append(op.Middlewares, func(ctx huma.Context, next func(huma.Context)) {
		if action != "" {
			// Named before the access check so denied calls carry it too.
			SetAudit(ctx.Context(), action, "")
		}
		if err := checkIn(ctx.Context(), acc, ctx.Param("tenant")); err != nil {
			ae := toAPIError(a.log, err)
			if ae.Body.Code != codes[ae.status] { // a coded refusal (tenancy) keeps its code
				noteError(ctx.Context(), ae.Body.Message)
				ctx.SetHeader("Content-Type", "application/json")
				ctx.SetStatus(ae.status)
				_ = json.NewEncoder(ctx.BodyWriter()).Encode(ae)
				return
			}
			_ = huma.WriteErr(a.huma, ctx, ae.status, ae.Body.Message)
			return
		}
		next(ctx)
	})
	huma.Register(a.huma, op, func(ctx context.Context, in *I) (*O, error) {
		out, err := h(ctx, in)
		if err != nil {
			ae := toAPIError(a.log, err)
			noteError(ctx, ae.Body.Message)
			return nil, ae
		}
		return out, nil
	})
	a.record(op.Method, op.Path, acc)
}
