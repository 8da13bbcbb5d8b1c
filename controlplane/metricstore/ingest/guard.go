package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// guard admits a push only within the limits, buffers its body once and
// rewrites Prometheus' plain-text errors into the API error envelope.
type guard struct {
	limits   Limits
	keyOf    func(*http.Request) string
	hostOf   func(*http.Request) string // nil: any host_name
	logger   *slog.Logger
	slots    chan struct{}
	inflight atomic.Int64 // bytes of bodies currently held
	requests *prometheus.CounterVec
}

func newGuard(l Limits, logger *slog.Logger, reg prometheus.Registerer) *guard {
	g := &guard{
		limits: l,
		logger: logger,
		slots:  make(chan struct{}, l.MaxInflightRequests),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "heteroflow_ingest_requests_total",
			Help: "Metric pushes received, by protocol and HTTP status code.",
		}, []string{"protocol", "code"}),
	}
	reg.MustRegister(g.requests)
	return g
}

// wrap guards next; pre, when not nil, checks the body before next sees it.
func (g *guard) wrap(protocol string, next http.Handler, pre func([]byte, *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &recorder{ResponseWriter: w}
		g.serve(rec, r, next, pre)
		g.requests.WithLabelValues(protocol, strconv.Itoa(rec.statusOr200())).Inc()
	})
}

func (g *guard) serve(w *recorder, r *http.Request, next http.Handler, pre func([]byte, *http.Request) error) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", "use POST")
		return
	}
	if r.ContentLength > g.limits.MaxBodyBytes {
		writeError(w, http.StatusRequestEntityTooLarge, "payload_too_large", tooLarge(g.limits.MaxBodyBytes))
		return
	}
	select {
	case g.slots <- struct{}{}:
		defer func() { <-g.slots }()
	default:
		g.tooMany(w, "too many concurrent pushes")
		return
	}
	// Reserve the worst case before reading, so a burst of large bodies
	// cannot allocate past the budget while being read.
	reserve := g.limits.MaxBodyBytes
	if r.ContentLength >= 0 {
		reserve = r.ContentLength
	}
	if g.inflight.Add(reserve) > g.limits.MaxInflightBytes {
		g.inflight.Add(-reserve)
		g.tooMany(w, "too many bytes of pushes in flight")
		return
	}
	defer func() { g.inflight.Add(-reserve) }()

	body, err := io.ReadAll(io.LimitReader(r.Body, g.limits.MaxBodyBytes+1))
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_argument", "reading body: "+err.Error())
		return
	}
	if int64(len(body)) > g.limits.MaxBodyBytes {
		writeError(w, http.StatusRequestEntityTooLarge, "payload_too_large", tooLarge(g.limits.MaxBodyBytes))
		return
	}
	if pre != nil {
		if err := pre(body, r); err != nil {
			writeError(w, http.StatusBadRequest, "invalid_argument", err.Error())
			return
		}
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	oc := &outcome{key: g.keyOf(r)}
	if g.hostOf != nil {
		oc.host = g.hostOf(r)
	}
	r = r.WithContext(context.WithValue(r.Context(), outcomeKey{}, oc))

	w.capture = true
	next.ServeHTTP(w, r)
	w.finish(g, oc)
}

func (g *guard) tooMany(w http.ResponseWriter, msg string) {
	w.Header().Set("Retry-After", retryAfter(g.limits.RetryAfter))
	writeError(w, http.StatusTooManyRequests, "too_many_requests", msg)
}

func tooLarge(limit int64) string {
	return "request body exceeds " + strconv.FormatInt(limit, 10) + " bytes; send smaller batches"
}

func retryAfter(d time.Duration) string {
	return strconv.Itoa(int((d + time.Second - 1) / time.Second))
}

// codes maps the statuses Prometheus' handlers answer to the contract codes.
var codes = map[int]string{
	http.StatusBadRequest:            "invalid_argument",
	http.StatusMethodNotAllowed:      "method_not_allowed",
	http.StatusRequestEntityTooLarge: "payload_too_large",
	http.StatusUnsupportedMediaType:  "unsupported_media_type",
	http.StatusTooManyRequests:       "too_many_requests",
	http.StatusInternalServerError:   "internal",
	http.StatusServiceUnavailable:    "unavailable",
}

// writeError writes the REST contract's error envelope.
func writeError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Del("Content-Length")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": code, "message": msg}})
}

// recorder passes successes through and holds back error bodies so they can
// be rewritten into the envelope.
type recorder struct {
	http.ResponseWriter
	status  int
	capture bool
	errBody bytes.Buffer
}

func (r *recorder) WriteHeader(code int) {
	if r.status != 0 {
		return
	}
	r.status = code
	if r.capture && code >= 400 {
		return // written by finish
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.WriteHeader(http.StatusOK)
	}
	if r.capture && r.status >= 400 {
		return r.errBody.Write(b)
	}
	return r.ResponseWriter.Write(b)
}

func (r *recorder) statusOr200() int {
	if r.status == 0 {
		return http.StatusOK
	}
	return r.status
}

// finish emits a held-back error in the envelope. A backend commit failure
// marked ErrUnavailable becomes 503 + Retry-After; other 500s hide their
// internal text from the sender and are logged here instead.
func (r *recorder) finish(g *guard, oc *outcome) {
	if !r.capture || r.status < 400 {
		return
	}
	r.capture = false
	status, msg := r.status, strings.TrimSpace(r.errBody.String())
	switch {
	case oc.err != nil && errors.Is(oc.err, ErrLimited):
		r.Header().Set("Retry-After", retryAfter(g.limits.RetryAfter))
		status, msg = http.StatusTooManyRequests, oc.err.Error()
	case oc.err != nil && errors.Is(oc.err, ErrRejected):
		status, msg = http.StatusBadRequest, oc.err.Error()
	case status >= 500 && oc.err != nil && errors.Is(oc.err, ErrUnavailable):
		g.logger.Warn("metrics backend unavailable", "err", oc.err)
		r.Header().Set("Retry-After", retryAfter(g.limits.RetryAfter))
		status, msg = http.StatusServiceUnavailable, "metrics backend unavailable, retry later"
	case status >= 500:
		g.logger.Error("storing pushed metrics", "status", status, "err", msg)
		msg = "internal error storing samples"
	}
	code, ok := codes[status]
	if !ok {
		code = "invalid_argument"
	}
	r.status = 0 // let writeError set the real status
	writeError(r, status, code, msg)
}
