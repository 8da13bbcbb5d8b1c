package metricstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb"
	"github.com/prometheus/prometheus/util/compression"

	"github.com/heteroflow/heteroflow/controlplane/metricstore/forward"
	"github.com/heteroflow/heteroflow/controlplane/metricstore/ingest"
	"github.com/heteroflow/heteroflow/controlplane/metricstore/promapi"
	"github.com/heteroflow/heteroflow/controlplane/metricstore/query"
)

// Options are the server's dependencies.
type Options struct {
	Logger *slog.Logger
	// Registerer receives the store's own metrics (TSDB, engine, ingest);
	// nil means a private registry.
	Registerer prometheus.Registerer
	// Gatherer is self-ingested every SelfIngestInterval; normally the
	// same registry the server serves on /metrics. Nil disables it.
	Gatherer prometheus.Gatherer
	// Instance labels self-ingested series; empty means the host name.
	Instance string
	// Version is reported by /api/v1/status/buildinfo.
	Version string
	// IngestKey names a push's sender for its new-series budget (the
	// server passes the API key or user); nil means the client address.
	IngestKey func(*http.Request) string
	// IngestHost names the only host_name a push may carry ("" = any);
	// nil: any push names any host.
	IngestHost func(*http.Request) string
}

// Store is the server's metrics backbone in either mode.
type Store struct {
	mode    string
	logger  *slog.Logger
	db      *tsdb.DB // embedded only
	tracker *promql.ActiveQueryTracker
	querier query.Querier
	backend storage.AppendableV2 // where ingest writes: the TSDB or the remote-write forwarder
	ingest  *ingest.Handler
	routes  func(chi.Router)
	stop    context.CancelFunc
	done    chan struct{}
}

// Open starts the store described by cfg. Close it when done.
func Open(cfg Config, o Options) (*Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Registerer == nil {
		o.Registerer = prometheus.NewRegistry()
	}
	s := &Store{mode: cfg.Mode, logger: o.Logger}
	meta := ingest.NewMetadataStore()
	var backend storage.AppendableV2
	var err error
	switch cfg.Mode {
	case ModeEmbedded:
		backend, err = s.openEmbedded(cfg, o, meta)
	default:
		backend, err = s.openRemote(cfg, o)
	}
	if err != nil {
		return nil, err
	}
	s.backend = backend
	s.ingest, err = ingest.New(backend, ingest.Options{
		Limits: cfg.Ingest, Logger: o.Logger.With("component", "ingest"), Registerer: o.Registerer,
		Metadata: meta, LookbackDelta: cfg.Query.LookbackDelta, PromoteResourceAttributes: cfg.PromoteResourceAttributes,
		KeyOf: o.IngestKey, HostOf: o.IngestHost,
	})
	if err != nil {
		_ = s.Close()
		return nil, err
	}
	s.startSelfIngest(cfg, o, backend, meta)
	return s, nil
}

// subqueryDefaultStep is the step of subqueries that name none, as in a
// Prometheus with the default evaluation_interval.
const subqueryDefaultStep = time.Minute

func (s *Store) openEmbedded(cfg Config, o Options, meta *ingest.MetadataStore) (storage.AppendableV2, error) {
	if err := os.MkdirAll(cfg.Dir, 0o750); err != nil {
		return nil, fmt.Errorf("metrics: creating %s: %w", cfg.Dir, err)
	}
	opts := tsdb.DefaultOptions()
	opts.RetentionDuration = cfg.Retention.Milliseconds()
	opts.MaxBytes = cfg.RetentionSize
	opts.OutOfOrderTimeWindow = cfg.OutOfOrderWindow.Milliseconds()
	opts.EnableExemplarStorage = true
	opts.MaxExemplars = 100_000
	if cfg.WALCompression {
		opts.WALCompression = compression.Snappy
	}
	// As Prometheus does: compacted blocks grow up to a tenth of the
	// retention (at most 31d), so old data is few large blocks and
	// time-based retention deletes in reasonable steps.
	maxBlock := cfg.Retention / 10
	maxBlock = min(max(maxBlock, 2*time.Hour), 31*24*time.Hour)
	opts.MaxBlockDuration = maxBlock.Milliseconds()

	db, err := tsdb.Open(cfg.Dir, o.Logger.With("component", "tsdb"), o.Registerer, opts, nil)
	if err != nil {
		return nil, fmt.Errorf("metrics: opening TSDB in %s: %w", cfg.Dir, err)
	}
	s.db = db
	// The tracker enforces max_concurrent and logs queries that were
	// running if the process dies, like Prometheus' queries.active.
	s.tracker, err = promql.NewActiveQueryTracker(cfg.Dir, cfg.Query.MaxConcurrent, o.Logger.With("component", "promql"))
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("metrics: query tracker: %w", err)
	}
	engine := promql.NewEngine(promql.EngineOpts{
		Logger: o.Logger.With("component", "promql"), Reg: o.Registerer,
		MaxSamples: cfg.Query.MaxSamples, Timeout: cfg.Query.Timeout, ActiveQueryTracker: s.tracker,
		LookbackDelta: cfg.Query.LookbackDelta, EnableAtModifier: true, EnableNegativeOffset: true,
		// A subquery without a step (x[10m:]) evaluates at this interval,
		// Prometheus' default global evaluation_interval. Unset, the engine
		// dereferences a nil function and the query panics.
		NoStepSubqueryIntervalFn: func(int64) int64 { return subqueryDefaultStep.Milliseconds() },
	})
	s.querier = query.NewEmbedded(engine, db)
	api, err := promapi.New(promapi.Options{Engine: engine, Queryable: db, Metadata: meta, Version: o.Version, Logger: o.Logger.With("component", "promapi")})
	if err != nil {
		_ = s.Close()
		return nil, err
	}
	s.routes = api.Routes
	return db, nil
}

func (s *Store) openRemote(cfg Config, o Options) (storage.AppendableV2, error) {
	q, err := query.NewRemote(cfg.remoteQuery(), nil)
	if err != nil {
		return nil, err
	}
	fw, err := forward.New(cfg.remoteWrite(), nil)
	if err != nil {
		return nil, err
	}
	r := cfg.Remote
	proxy, err := promapi.NewProxy(r.QueryURL, query.AuthTransport(http.DefaultTransport, r.Username, r.Password, r.BearerToken), o.Logger.With("component", "promapi"))
	if err != nil {
		return nil, err
	}
	s.querier, s.routes = q, proxy.Routes
	return fw, nil
}

// Querier is the PromQL interface for the scheduler, alerts, billing and
// the console.
func (s *Store) Querier() query.Querier { return s.querier }

// Mode reports ModeEmbedded or ModeRemote.
func (s *Store) Mode() string { return s.mode }

// DB is the embedded TSDB, nil in remote mode.
func (s *Store) DB() *tsdb.DB { return s.db }

// Appendable is where rule output (recording rules, ALERTS) is written:
// the TSDB, or the remote-write forwarder in remote mode.
func (s *Store) Appendable() storage.AppendableV2 { return s.backend }

// IngestRoutes mounts POST /api/v1/write and POST /api/v1/otlp/v1/metrics.
func (s *Store) IngestRoutes(r chi.Router) { s.ingest.Routes(r) }

// RemoteWriteHandler and OTLPHandler are the receivers as plain handlers.
func (s *Store) RemoteWriteHandler() http.Handler { return s.ingest.RemoteWrite() }

// OTLPHandler is the OTLP/HTTP metrics receiver.
func (s *Store) OTLPHandler() http.Handler { return s.ingest.OTLP() }

// QueryRoutes mounts the Prometheus-compatible API at /api/v1/… on r;
// mount r at /prometheus.
func (s *Store) QueryRoutes(r chi.Router) { s.routes(r) }

// QueryHandler is QueryRoutes as a plain handler rooted at /api/v1 (for
// http.StripPrefix("/prometheus", …)).
func (s *Store) QueryHandler() http.Handler {
	r := chi.NewRouter()
	s.routes(r)
	return r
}

// Close stops self-ingestion and closes the TSDB (flushing the head is not
// needed: the WAL replays on the next Open).
func (s *Store) Close() error {
	if s.stop != nil {
		s.stop()
		<-s.done
	}
	var errs []error
	if s.tracker != nil {
		errs = append(errs, s.tracker.Close())
	}
	if s.db != nil {
		errs = append(errs, s.db.Close())
	}
	return errors.Join(errs...)
}
