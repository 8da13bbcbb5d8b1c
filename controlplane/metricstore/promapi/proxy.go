package promapi

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"

	"github.com/go-chi/chi/v5"
)

// Proxy serves the same /api/v1 paths in remote mode by forwarding them to
// an external Prometheus-compatible store.
type Proxy struct {
	rp *httputil.ReverseProxy
}

// NewProxy forwards to base (the store's API root, e.g.
// http://victoria:8428). transport carries the store's credentials (see
// query.AuthTransport); the caller's own Authorization header, which holds
// a HeteroFlow API key, is never passed on.
func NewProxy(base string, transport http.RoundTripper, logger *slog.Logger) (*Proxy, error) {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("promapi: invalid remote url %q", base)
	}
	if logger == nil {
		logger = slog.Default()
	}
	rp := &httputil.ReverseProxy{
		Transport: transport,
		Rewrite: func(pr *httputil.ProxyRequest) {
			// Keep only the part from /api/v1 on, wherever we are mounted.
			p := pr.In.URL.Path
			if i := strings.Index(p, "/api/v1/"); i >= 0 {
				p = p[i:]
			}
			pr.SetURL(u)
			pr.Out.URL.Path = strings.TrimSuffix(u.Path, "/") + p
			pr.Out.URL.RawPath = ""
			pr.Out.Header.Del("Authorization")
			pr.Out.Header.Del("X-API-Key")
			pr.Out.Header.Del("Cookie")
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			logger.Warn("remote metrics store unreachable", "err", err)
			writeAPIError(w, &apiError{typ: errUnavailable, err: fmt.Errorf("remote metrics store unreachable")})
		},
	}
	return &Proxy{rp: rp}, nil
}

// Routes mounts the proxy on r at the read endpoints the embedded API
// serves (API.Routes), with the same methods, and nothing else: the remote
// store's admin API (delete series, snapshots), import and export would
// otherwise be open, with the store's credentials, to every caller allowed
// to read metrics.
func (p *Proxy) Routes(r chi.Router) {
	r.Route("/api/v1", func(r chi.Router) {
		for _, path := range []string{"/query", "/query_range", "/series", "/labels", "/query_exemplars"} {
			r.Get(path, p.rp.ServeHTTP)
			r.Post(path, p.rp.ServeHTTP)
		}
		r.Get("/label/{name}/values", p.rp.ServeHTTP)
		r.Get("/metadata", p.rp.ServeHTTP)
		r.Get("/status/buildinfo", p.rp.ServeHTTP)
		r.NotFound(func(w http.ResponseWriter, r *http.Request) {
			writeAPIError(w, &apiError{typ: errNotFound, err: fmt.Errorf("%s is not served by this API", r.URL.Path)})
		})
		r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
			writeAPIError(w, &apiError{typ: errNotFound, err: fmt.Errorf("%s %s is not served by this API", r.Method, r.URL.Path)})
		})
	})
}
