package promapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/storage"

	"github.com/heteroflow/heteroflow/controlplane/metricstore/ingest"
)

// BuildInfo is what /api/v1/status/buildinfo reports.
type BuildInfo struct {
	Version   string `json:"version"`
	Revision  string `json:"revision"`
	Branch    string `json:"branch"`
	BuildUser string `json:"buildUser"`
	BuildDate string `json:"buildDate"`
	GoVersion string `json:"goVersion"`
}

// Options configure New.
type Options struct {
	Engine    *promql.Engine
	Queryable storage.Queryable
	// Metadata is served by /api/v1/metadata; nil serves an empty map.
	Metadata *ingest.MetadataStore
	// Version of the server. Grafana parses it as the Prometheus version to
	// pick features, so BuildInfo.Version defaults to a Prometheus 2.x-like
	// "2.55.0" when empty (our API implements that generation's endpoints).
	Version string
	Logger  *slog.Logger
}

// API serves the embedded store.
type API struct {
	engine    *promql.Engine
	queryable storage.Queryable
	meta      *ingest.MetadataStore
	parser    parser.Parser
	build     BuildInfo
	logger    *slog.Logger
}

// New returns the API over an engine and a queryable.
func New(o Options) (*API, error) {
	if o.Engine == nil || o.Queryable == nil {
		return nil, errors.New("promapi: engine and queryable are required")
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.Default()
	}
	meta := o.Metadata
	if meta == nil {
		meta = ingest.NewMetadataStore()
	}
	v := o.Version
	if v == "" {
		v = "2.55.0"
	}
	return &API{
		engine: o.Engine, queryable: o.Queryable, meta: meta, logger: logger,
		parser: parser.NewParser(parser.Options{}),
		build:  BuildInfo{Version: v, Revision: "heteroflow", Branch: "heteroflow", GoVersion: runtime.Version()},
	}, nil
}

// Routes mounts the endpoints at /api/v1/… on r; mount r at /prometheus.
func (a *API) Routes(r chi.Router) {
	r.Route("/api/v1", func(r chi.Router) {
		r.Get("/query", a.wrap(a.query))
		r.Post("/query", a.wrap(a.query))
		r.Get("/query_range", a.wrap(a.queryRange))
		r.Post("/query_range", a.wrap(a.queryRange))
		r.Get("/series", a.wrap(a.series))
		r.Post("/series", a.wrap(a.series))
		r.Get("/labels", a.wrap(a.labelNames))
		r.Post("/labels", a.wrap(a.labelNames))
		r.Get("/label/{name}/values", a.wrap(a.labelValues))
		r.Get("/metadata", a.wrap(a.metadata))
		r.Get("/query_exemplars", a.wrap(a.exemplars))
		r.Post("/query_exemplars", a.wrap(a.exemplars))
		r.Get("/status/buildinfo", a.wrap(a.buildInfo))
		r.NotFound(func(w http.ResponseWriter, r *http.Request) {
			writeAPIError(w, &apiError{typ: errNotFound, err: fmt.Errorf("%s is not served by this API", r.URL.Path)})
		})
	})
}

// Handler returns the routes as a plain handler rooted at /api/v1.
func (a *API) Handler() http.Handler {
	r := chi.NewRouter()
	a.Routes(r)
	return r
}

// result is what an endpoint returns on success.
type result struct {
	data            any
	warnings, infos []string
	// finalizer releases what data still points into: the engine's pooled
	// point slices (promql.Query.Close) or a storage querier's label memory
	// (storage.Querier.Close). wrap calls it only after data is encoded into
	// the response, as Prometheus' own HTTP API does; released earlier, a
	// concurrent query can overwrite the points while they are written.
	finalizer func()
}

func (a *API) wrap(f func(*http.Request) (result, *apiError)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			writeAPIError(w, badData(fmt.Errorf("error parsing form values: %w", err)))
			return
		}
		res, apiErr := f(r)
		if res.finalizer != nil {
			defer res.finalizer()
		}
		if apiErr != nil {
			if apiErr.typ == errInternal {
				a.logger.Error("prometheus api", "path", r.URL.Path, "err", apiErr.err)
			}
			writeAPIError(w, apiErr)
			return
		}
		writeSuccess(w, res.data, res.warnings, res.infos)
	}
}

type queryData struct {
	ResultType parser.ValueType `json:"resultType"`
	Result     resultJSON       `json:"result"`
}

func (a *API) query(r *http.Request) (result, *apiError) {
	ts, err := timeParam(r, "time", time.Now())
	if err != nil {
		return result{}, badData(err)
	}
	ctx, cancel, apiErr := withTimeout(r)
	if apiErr != nil {
		return result{}, apiErr
	}
	defer cancel()
	q, err := a.engine.NewInstantQuery(ctx, a.queryable, nil, r.FormValue("query"), ts)
	if err != nil {
		return result{}, constructionError(err)
	}
	return a.exec(ctx, q, r.FormValue("query"))
}

func (a *API) queryRange(r *http.Request) (result, *apiError) {
	start, err := timeParam(r, "start", time.Time{})
	if err != nil || start.IsZero() {
		return result{}, badData(orMissing(err, "start"))
	}
	end, err := timeParam(r, "end", time.Time{})
	if err != nil || end.IsZero() {
		return result{}, badData(orMissing(err, "end"))
	}
	if end.Before(start) {
		return result{}, badData(errors.New("end timestamp must not be before start time"))
	}
	step, err := parseDuration(r.FormValue("step"))
	if err != nil {
		return result{}, badData(fmt.Errorf("invalid parameter \"step\": %w", err))
	}
	if step <= 0 {
		return result{}, badData(errors.New("zero or negative query resolution step widths are not accepted. Try a positive integer"))
	}
	if end.Sub(start)/step > 11000 {
		return result{}, badData(errors.New("exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query resolution (?step=XX)"))
	}
	ctx, cancel, apiErr := withTimeout(r)
	if apiErr != nil {
		return result{}, apiErr
	}
	defer cancel()
	q, err := a.engine.NewRangeQuery(ctx, a.queryable, nil, r.FormValue("query"), start, end, step)
	if err != nil {
		return result{}, constructionError(err)
	}
	return a.exec(ctx, q, r.FormValue("query"))
}

// exec runs q. On success the result's finalizer closes q: the value shares
// the engine's pooled point slices until then.
func (a *API) exec(ctx context.Context, q promql.Query, expr string) (result, *apiError) {
	res := q.Exec(ctx)
	if res.Err != nil {
		q.Close()
		return result{}, engineError(res.Err)
	}
	warnings, infos := res.Warnings.AsStrings(expr, 10, 10)
	return result{
		data:     queryData{ResultType: res.Value.Type(), Result: resultJSON{nonNil(res.Value)}},
		warnings: warnings, infos: infos,
		finalizer: q.Close,
	}, nil
}

// nonNil turns the engine's nil Matrix/Vector (e.g. sum() over no series)
// into an empty one: Prometheus answers "result":[] there, never null, and
// clients iterate over the result without a null check.
func nonNil(v parser.Value) parser.Value {
	switch x := v.(type) {
	case promql.Matrix:
		if x == nil {
			return promql.Matrix{}
		}
	case promql.Vector:
		if x == nil {
			return promql.Vector{}
		}
	}
	return v
}

// constructionError classifies a failure to build a query (a parse error,
// mostly) as Prometheus' queryConstructionError does, with its message.
func constructionError(err error) *apiError {
	var (
		canceled promql.ErrQueryCanceled
		timeout  promql.ErrQueryTimeout
	)
	if errors.As(err, &canceled) || errors.As(err, &timeout) {
		return engineError(err)
	}
	return badData(fmt.Errorf("invalid parameter %q: %w", "query", err))
}

// engineError classifies like Prometheus' returnAPIError.
func engineError(err error) *apiError {
	var (
		canceled promql.ErrQueryCanceled
		timeout  promql.ErrQueryTimeout
		storErr  promql.ErrStorage
	)
	switch {
	case errors.As(err, &canceled), errors.Is(err, context.Canceled):
		return &apiError{typ: errCanceled, err: err}
	case errors.As(err, &timeout), errors.Is(err, context.DeadlineExceeded):
		return &apiError{typ: errTimeout, err: err}
	case errors.As(err, &storErr):
		return &apiError{typ: errInternal, err: err}
	default:
		return &apiError{typ: errExec, err: err}
	}
}

func withTimeout(r *http.Request) (context.Context, context.CancelFunc, *apiError) {
	v := r.FormValue("timeout")
	if v == "" {
		ctx, cancel := context.WithCancel(r.Context())
		return ctx, cancel, nil
	}
	d, err := parseDuration(v)
	if err != nil {
		return nil, nil, badData(fmt.Errorf("invalid parameter \"timeout\": %w", err))
	}
	ctx, cancel := context.WithTimeout(r.Context(), d)
	return ctx, cancel, nil
}

func orMissing(err error, name string) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("missing parameter %q", name)
}

func (a *API) buildInfo(*http.Request) (result, *apiError) {
	return result{data: a.build}, nil
}

func (a *API) metadata(r *http.Request) (result, *apiError) {
	limit, err := limitParam(r)
	if err != nil {
		return result{}, badData(err)
	}
	return result{data: a.meta.List(r.FormValue("metric"), limit)}, nil
}

// exemplars answers an empty list: Grafana queries exemplars alongside
// range queries and must not see an error for a feature we do not serve.
func (a *API) exemplars(*http.Request) (result, *apiError) {
	return result{data: []any{}}, nil
}
