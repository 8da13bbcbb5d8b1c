package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/auth"
	"github.com/heteroflow/heteroflow/controlplane/auth/ldapauth"
	"github.com/heteroflow/heteroflow/controlplane/auth/oidcauth"
	"github.com/heteroflow/heteroflow/controlplane/httpapi"
	"github.com/heteroflow/heteroflow/controlplane/metricstore"
	"github.com/heteroflow/heteroflow/controlplane/metricstore/promapi"
	"github.com/heteroflow/heteroflow/controlplane/metricstore/query"
	"github.com/heteroflow/heteroflow/controlplane/pki"
	"github.com/heteroflow/heteroflow/controlplane/tracing"
	"github.com/heteroflow/heteroflow/web"
)

// Options are the process-level inputs besides Config.
type Options struct {
	Logger  *slog.Logger
	Stderr  io.Writer           // where a generated admin password is printed
	Getenv  func(string) string // for HETEROFLOW_ADMIN_PASSWORD; nil = os.Getenv
	Version string
}

// Server is a configured, not yet listening, control plane.
type Server struct {
	cfg        Config
	log        *slog.Logger
	store      controlplane.Store
	metrics    *metricstore.Store
	auditor    *httpapi.Auditor
	api        *httpapi.API
	apiSrv     *http.Server
	consoleSrv *http.Server
	metricsSrv *http.Server
	apiLn      net.Listener
	consoleLn  net.Listener
	metricsLn  net.Listener
	enrollment *EnrollmentJSON
	signingKey []byte
	ca         *pki.CA     // agent CA when mTLS is on
	tls        *tls.Config // nil without HTTPS
	sealer     *Sealer     // seals secrets kept in the database; HA's key, or see Sealer
	federated  federatedHandler
}

// New opens the store, bootstraps the first admin and builds the API.
func New(ctx context.Context, cfg Config, o Options) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("invalid configuration:\n%w", err)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Stderr == nil {
		o.Stderr = os.Stderr
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	log := o.Logger
	if err := secureDataDir(cfg.DataDir, log); err != nil {
		return nil, err
	}
	store, err := openStore(ctx, cfg.DB, cfg.DataDir, log)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	s := &Server{cfg: cfg, log: log, store: store}
	if err := s.build(ctx, o); err != nil {
		_ = store.Close()
		return nil, err
	}
	return s, nil
}

func (s *Server) build(ctx context.Context, o Options) error {
	key, err := s.loadSecrets(ctx, o)
	if err != nil {
		return err
	}
	if s.ca != nil {
		s.ca.ClientValidity = time.Duration(s.cfg.TLS.AgentCertValidity)
	}
	if s.tls, err = s.cfg.tlsConfig(s.ca); err != nil {
		return err
	}
	s.signingKey = key
	s.auditor = httpapi.NewAuditor(s.store, s.log, httpapi.AuditorOptions{})
	a := s.cfg.Auth
	var directory auth.Directory
	if a.LDAP.Enabled() {
		ldapCfg := a.LDAP
		if err := ldapCfg.LoadSecret(o.Getenv); err != nil {
			return err
		}
		d, err := ldapauth.New(ldapCfg, s.log.With("component", "ldap"))
		if err != nil {
			return err
		}
		directory = d
	}
	svc, err := auth.New(s.store, auth.Config{
		Directory: directory,
		AccessTTL: time.Duration(a.AccessTTL), RefreshTTL: time.Duration(a.RefreshTTL), SigningKey: key,
		Lockout:    auth.LockoutPolicy{MaxFailures: a.LockoutFailures, Duration: time.Duration(a.LockoutDuration)},
		LoginLimit: a.LoginPerMinute, LoginWindow: time.Minute, APIKeyCacheTTL: time.Duration(a.APIKeyCacheTTL),
		Audit: func(_ context.Context, e *controlplane.AuditEntry) { s.auditor.Record(e) },
	}, s.log)
	if err != nil {
		return err
	}
	created, err := bootstrapAdmin(ctx, s.store, svc, o.Getenv(EnvAdminPassword), o.Stderr)
	if err != nil {
		return err
	}
	if created {
		s.auditor.Record(&controlplane.AuditEntry{Actor: "system", Module: controlplane.ModuleAuth, Level: controlplane.LevelInfo,
			Action: "user.bootstrap", Target: "user/" + BootstrapAdmin, Result: "ok"})
		s.log.Info("created bootstrap administrator", "username", BootstrapAdmin)
	}
	var rp *oidcauth.RP
	if len(a.OIDC) > 0 {
		providers := append([]oidcauth.ProviderConfig(nil), a.OIDC...)
		for i := range providers {
			if err := providers[i].LoadSecret(o.Getenv); err != nil {
				return err
			}
		}
		if rp, err = oidcauth.New(oidcauth.Options{Providers: providers, SigningKey: key, Auth: svc,
			Logger: s.log.With("component", "oidc")}); err != nil {
			return err
		}
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	s.api, err = httpapi.New(httpapi.Options{Store: s.store, Auth: svc, Auditor: s.auditor, Logger: s.log, Registry: reg,
		CORSOrigins: s.cfg.CORSOrigins, MaxBodyBytes: s.cfg.MaxBodyBytes, Version: o.Version,
		AllowRegistration: s.cfg.AllowRegistration, RequireAgentCert: s.cfg.TLS.RequireAgentCert, RateLimits: s.cfg.RateLimit, GrafanaURL: s.cfg.GrafanaURL, OIDC: rp})
	if err != nil {
		return err
	}
	if err := s.registerEnrollment(); err != nil {
		return err
	}
	return s.openMetrics(reg, o.Version)
}

// openMetrics opens the metrics store and mounts its ingest endpoints
// (remote-write 1.0 and OTLP/HTTP, permission metrics:write — agents and
// collectors) and the Prometheus-compatible query API under /prometheus
// (metrics:read — Grafana, promtool, the console).
func (s *Server) openMetrics(reg *prometheus.Registry, version string) error {
	ms, err := metricstore.Open(s.cfg.metricsConfig(), metricstore.Options{
		Logger: s.log.With("component", "metrics"), Registerer: reg, Gatherer: reg, Version: version,
		IngestKey: ingestSender, IngestHost: ingestHost,
	})
	if err != nil {
		return fmt.Errorf("open metrics store: %w", err)
	}
	s.metrics = ms
	write := httpapi.Perm(auth.ResMetrics, auth.ActWrite)
	s.api.HandleStream(http.MethodPost, httpapi.Prefix+"/write", write, ms.RemoteWriteHandler())
	s.api.HandleStream(http.MethodPost, httpapi.Prefix+"/otlp/v1/metrics", write, ms.OTLPHandler())
	s.api.Mount("/prometheus", httpapi.Perm(auth.ResMetrics, auth.ActRead), httpapi.QueryConcurrency(s.cfg.RateLimit.QueryConcurrency, http.StripPrefix("/prometheus", promapi.Scoped(s.metricsScope, s.promQuery(ms.QueryHandler())))))
	s.documentMetrics()
	return nil
}

// metricsScope narrows a caller below operator to the series of its
// tenants and of the nodes dedicated to them (httpapi.Visibility).
func (s *Server) metricsScope(r *http.Request) (*promapi.Scope, error) {
	v, err := s.api.VisibilityOf(r.Context())
	if err != nil || v.All {
		return nil, err
	}
	return &promapi.Scope{Tenants: v.Tenants, Nodes: v.Nodes}, nil
}

// Querier is the one PromQL interface for the scheduler, alerts, billing
// and the console (embedded TSDB or the remote store).
func (s *Server) Querier() query.Querier { return s.metrics.Querier() }

// Metrics is the metrics store (the alert engine writes rule output to it).
func (s *Server) Metrics() *metricstore.Store { return s.metrics }

// API is the REST API; other subsystems mount their routes on it before Start.
func (s *Server) API() *httpapi.API { return s.api }

// Store is the opened store, shared with subsystems started beside the API.
func (s *Server) Store() controlplane.Store { return s.store }

// SigningKey is the JWT signing key (kept in Auth.SigningKeyFile), for
// components that build their own auth.Service over the same store.
func (s *Server) SigningKey() []byte { return s.signingKey }

// Auditor writes audit entries off the request path (subsystems record
// their own events through it).
func (s *Server) Auditor() *httpapi.Auditor { return s.auditor }

// Start opens the listeners and serves in the background.
func (s *Server) Start() error {
	var err error
	if s.apiLn, err = s.listen(s.cfg.APIAddr); err != nil {
		return fmt.Errorf("listen api %s: %w / 无法监听API地址 %s（端口被占用？用 --api-addr 换一个）", s.cfg.APIAddr, err, s.cfg.APIAddr)
	}
	s.apiSrv = newHTTPServer(tracing.Handler(s.api), s.log)
	go s.serve(s.apiSrv, s.apiLn, "api")
	if s.cfg.ConsoleAddr != "" {
		if s.consoleLn, err = s.listen(s.cfg.ConsoleAddr); err != nil {
			_ = s.apiLn.Close()
			return fmt.Errorf("listen console %s: %w / 无法监听控制台地址 %s（端口被占用？用 --console-addr 换一个）", s.cfg.ConsoleAddr, err, s.cfg.ConsoleAddr)
		}
		s.consoleSrv = newHTTPServer(ConsoleHandler(tracing.Handler(s.api), web.Dist(), web.Built()), s.log)
		go s.serve(s.consoleSrv, s.consoleLn, "console")
	}
	if s.cfg.MetricsAddr != "" {
		// Plain HTTP even with TLS on: meant for a scraper on loopback or a
		// private network, like node exporters.
		if s.metricsLn, err = net.Listen("tcp", s.cfg.MetricsAddr); err != nil {
			_ = s.apiLn.Close()
			if s.consoleLn != nil {
				_ = s.consoleLn.Close()
			}
			return fmt.Errorf("listen metrics %s: %w / 无法监听指标地址 %s（端口被占用？用 --metrics-addr 换一个）", s.cfg.MetricsAddr, err, s.cfg.MetricsAddr)
		}
		mux := http.NewServeMux()
		reg := s.api.Registry()
		mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
		s.metricsSrv = newHTTPServer(mux, s.log)
		go s.serve(s.metricsSrv, s.metricsLn, "metrics")
	}
	s.log.Info("heteroflow server listening", "api", s.APIAddr(), "console", s.ConsoleAddr(), "metrics", s.MetricsAddr(),
		"console_built", web.Built(), "https", s.tls != nil, "mtls", s.ca != nil)
	return nil
}

// listen opens a TCP listener, wrapped in TLS when HTTPS is configured.
func (s *Server) listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil || s.tls == nil {
		return ln, err
	}
	return tls.NewListener(ln, s.tls), nil
}

// CA is the agent certificate authority, nil unless tls.mtls is on.
func (s *Server) CA() *pki.CA { return s.ca }

// APIWriteTimeout bounds writing a response; PromQL queries must time out
// before it (Config.Validate) so callers get a JSON error, not a dropped
// connection.
const APIWriteTimeout = 120 * time.Second

func newHTTPServer(h http.Handler, log *slog.Logger) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 60 * time.Second,
		WriteTimeout: APIWriteTimeout, IdleTimeout: 120 * time.Second, MaxHeaderBytes: 64 << 10,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
}

func (s *Server) serve(srv *http.Server, ln net.Listener, name string) {
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		s.log.Error("listener stopped", "listener", name, "err", err)
	}
}

// APIAddr is the API's bound address (useful with port 0).
func (s *Server) APIAddr() string {
	if s.apiLn == nil {
		return ""
	}
	return s.apiLn.Addr().String()
}

// ConsoleAddr is the console's bound address, "" when disabled.
func (s *Server) ConsoleAddr() string {
	if s.consoleLn == nil {
		return ""
	}
	return s.consoleLn.Addr().String()
}

// MetricsAddr is the unauthenticated metrics listener's address, "" when disabled.
func (s *Server) MetricsAddr() string {
	if s.metricsLn == nil {
		return ""
	}
	return s.metricsLn.Addr().String()
}

// Shutdown stops accepting, lets in-flight requests finish, drains the
// audit queue and closes the store.
func (s *Server) Shutdown(ctx context.Context) error {
	var errs []error
	for _, srv := range []*http.Server{s.apiSrv, s.consoleSrv, s.metricsSrv} {
		if srv != nil {
			if err := srv.Shutdown(ctx); err != nil {
				errs = append(errs, err)
			}
		}
	}
	s.auditor.Close()
	if s.metrics != nil {
		if err := s.metrics.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close metrics store: %w", err))
		}
	}
	if err := s.store.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close store: %w", err))
	}
	return errors.Join(errs...)
}

// Run starts the server and blocks until ctx is cancelled (SIGINT/SIGTERM
// in the command), then shuts down gracefully.
func Run(ctx context.Context, cfg Config, o Options) error {
	s, err := New(ctx, cfg, o)
	if err != nil {
		return err
	}
	if err := s.Start(); err != nil {
		_ = s.Shutdown(context.Background())
		return err
	}
	<-ctx.Done()
	s.log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), time.Duration(cfg.ShutdownTimeout))
	defer cancel()
	return s.Shutdown(sctx)
}

// Config is the configuration the server was built with (subsystems
// attached beside it read their sections from it).
func (s *Server) Config() Config { return s.cfg }

// ingestHost is the host_name a node agent's push may carry: its node id,
// which its collector stamps on every series and by which the scheduler's
// LoadAware and the alerts know the node. Others (admin keys, scrapers)
// push for any host.
func ingestHost(r *http.Request) string {
	if p := httpapi.PrincipalFrom(r.Context()); p != nil && p.Role == controlplane.RoleAgent {
		return p.NodeID
	}
	return ""
}

// ingestSender names a metrics push's sender for its series budget: the
// API key or user that authenticated it.
func ingestSender(r *http.Request) string {
	if p := httpapi.PrincipalFrom(r.Context()); p != nil {
		return p.Actor()
	}
	return httpapi.ClientIP(r.Context())
}
