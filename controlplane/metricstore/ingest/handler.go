package ingest

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	remoteapi "github.com/prometheus/client_golang/exp/api/remote"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/config"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/storage/remote"
)

// Paths at which Routes mounts the handlers, relative to the router given.
const (
	RemoteWritePath = "/api/v1/write"
	OTLPPath        = "/api/v1/otlp/v1/metrics"
)

// Options configure New.
type Options struct {
	Limits Limits
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Registerer receives the ingest metrics; nil means none are exported.
	Registerer prometheus.Registerer
	// Metadata receives metric metadata seen in pushes; nil allocates one.
	Metadata *MetadataStore
	// LookbackDelta is the PromQL lookback used to space OTLP target_info
	// samples; zero means 5m, the engine default.
	LookbackDelta time.Duration
	// PromoteResourceAttributes are OTLP resource attributes copied onto
	// every series as labels (dots become underscores), so PromQL can group
	// by node without joining target_info. Nil means DefaultPromoted.
	PromoteResourceAttributes []string
	// KeyOf names a push's sender for its new-series budget (the server
	// passes the API key or user); nil means the client address.
	KeyOf func(*http.Request) string
	// HostOf names the only host_name a push may carry ("" = any): the
	// server passes a node agent's node id, so one node's key cannot write
	// series for another node (HostLabel).
	HostOf func(*http.Request) string
	// Now is the clock of the series budgets; nil means time.Now.
	Now func() time.Time
}

// DefaultPromoted names the resource attributes that identify a node.
var DefaultPromoted = []string{"host.name", "host.id"}

// Handler serves both push protocols into one backend.
type Handler struct {
	remoteWrite http.Handler
	otlp        http.Handler
	meta        *MetadataStore
}

// New builds the handlers appending into backend (a *tsdb.DB or a
// forwarder).
func New(backend storage.AppendableV2, o Options) (*Handler, error) {
	limits := o.Limits.WithDefaults()
	if err := limits.Validate(); err != nil {
		return nil, err
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.Default()
	}
	reg := o.Registerer
	if reg == nil {
		reg = prometheus.NewRegistry() // a private sink keeps the code paths identical
	}
	meta := o.Metadata
	if meta == nil {
		meta = NewMetadataStore()
	}
	lookback := o.LookbackDelta
	if lookback == 0 {
		lookback = 5 * time.Minute
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	app := &instrumented{
		next:  backend,
		valid: newValidator(limits, now),
		meta:  meta,
		samples: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "heteroflow_ingest_samples_total",
			Help: "Samples (float and histogram) committed from pushes.",
		}),
		failures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "heteroflow_ingest_commit_failures_total",
			Help: "Pushes whose commit to the backend failed.",
		}),
	}
	reg.MustRegister(app.samples, app.failures)
	g := newGuard(limits, logger, reg)
	g.keyOf = o.KeyOf
	if g.keyOf == nil {
		g.keyOf = remoteAddr
	}
	g.hostOf = o.HostOf
	// Prometheus' receivers log a sender's mistakes (bad snappy, bad
	// protobuf, refused series) at ERROR; they are 4xx answers, so their
	// records are capped at WARN. Real failures are logged at ERROR once
	// by the guard.
	promLogger := slog.New(capLevel{Handler: logger.Handler(), max: slog.LevelWarn})

	// Each Prometheus handler registers its own collectors; labelling the
	// registerer per protocol keeps them apart on one /metrics.
	rwReg := prometheus.WrapRegistererWith(prometheus.Labels{"protocol": "remote_write"}, reg)
	otlpReg := prometheus.WrapRegistererWith(prometheus.Labels{"protocol": "otlp"}, reg)

	rw := remote.NewWriteHandler(promLogger.With("protocol", "remote_write"), rwReg, app,
		remoteapi.MessageTypes{remoteapi.WriteV1MessageType, remoteapi.WriteV2MessageType}, false, false)
	promote := o.PromoteResourceAttributes
	if promote == nil {
		promote = DefaultPromoted
	}
	otlpCfg := config.DefaultConfig
	otlpCfg.OTLPConfig = config.DefaultOTLPConfig
	otlpCfg.OTLPConfig.PromoteResourceAttributes = promote
	otlp := remote.NewOTLPWriteHandler(promLogger.With("protocol", "otlp"), otlpReg, app,
		func() config.Config { return otlpCfg },
		// ConvertDelta: OTel SDKs may export delta temporality; convert it
		// so rate() and friends work as on scraped counters.
		remote.OTLPOptions{ConvertDelta: true, LookbackDelta: lookback})

	return &Handler{
		remoteWrite: g.wrap("remote_write", rw, app.valid.preValidateRemoteWrite),
		otlp:        g.wrap("otlp", otlp, nil),
		meta:        meta,
	}, nil
}

// RemoteWrite is the Prometheus remote-write receiver.
func (h *Handler) RemoteWrite() http.Handler { return h.remoteWrite }

// OTLP is the OTLP/HTTP metrics receiver.
func (h *Handler) OTLP() http.Handler { return h.otlp }

// Metadata is the store the handlers fill.
func (h *Handler) Metadata() *MetadataStore { return h.meta }

// Routes mounts both receivers at RemoteWritePath and OTLPPath.
func (h *Handler) Routes(r chi.Router) {
	r.Method(http.MethodPost, RemoteWritePath, h.remoteWrite)
	r.Method(http.MethodPost, OTLPPath, h.otlp)
}

// remoteAddr is the client address without its port.
func remoteAddr(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// capLevel lowers records above max to max.
type capLevel struct {
	slog.Handler
	max slog.Level
}

func (c capLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return c.Handler.Enabled(ctx, min(l, c.max))
}

func (c capLevel) Handle(ctx context.Context, r slog.Record) error {
	if r.Level > c.max {
		r.Level = c.max
	}
	return c.Handler.Handle(ctx, r)
}

func (c capLevel) WithAttrs(as []slog.Attr) slog.Handler {
	return capLevel{Handler: c.Handler.WithAttrs(as), max: c.max}
}

func (c capLevel) WithGroup(name string) slog.Handler {
	return capLevel{Handler: c.Handler.WithGroup(name), max: c.max}
}
