package promapi

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/prometheus/prometheus/promql/parser"
)

// ScopeOf resolves the scope of a request's caller: nil for callers who
// see every series.
type ScopeOf func(*http.Request) (*Scope, error)

// Scoped applies the caller's scope to the query API it wraps (the
// embedded API or the remote proxy, mounted so that paths start with
// /api/v1): PromQL in query is narrowed selector by selector, match[] of
// the series and label APIs set by set (the label APIs get the scope as
// match[] when none is given). A scoped caller reaches only the endpoints
// listed here; the proxy would otherwise pass on whatever the remote store
// serves (its TSDB status or raw export, for one).
func Scoped(scopeOf ScopeOf, next http.Handler) http.Handler {
	p := parser.NewParser(parser.Options{})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sc, err := scopeOf(r)
		if err != nil {
			writeAPIError(w, &apiError{typ: errInternal, err: err})
			return
		}
		if sc == nil {
			next.ServeHTTP(w, r)
			return
		}
		if err := r.ParseForm(); err != nil {
			writeAPIError(w, badData(fmt.Errorf("error parsing form values: %w", err)))
			return
		}
		form := url.Values{}
		for k, v := range r.Form {
			form[k] = append([]string(nil), v...)
		}
		path := strings.TrimSuffix(r.URL.Path, "/")
		switch {
		case strings.HasSuffix(path, "/api/v1/query"), strings.HasSuffix(path, "/api/v1/query_range"),
			strings.HasSuffix(path, "/api/v1/query_exemplars"):
			if q := form.Get("query"); q != "" {
				nq, err := sc.Query(p, q)
				if err != nil {
					writeAPIError(w, badData(fmt.Errorf("invalid parameter %q: %w", "query", err)))
					return
				}
				form.Set("query", nq)
			}
		case strings.HasSuffix(path, "/api/v1/series"), strings.HasSuffix(path, "/api/v1/labels"), labelValuesPath(path):
			sets, err := p.ParseMetricSelectors(form["match[]"])
			if err != nil {
				writeAPIError(w, badData(err))
				return
			}
			if len(sets) > 0 || !strings.HasSuffix(path, "/api/v1/series") { // /series without match[] stays the client's error
				form.Del("match[]")
				for _, set := range sc.MatcherSets(sets) {
					form.Add("match[]", Selector(set))
				}
			}
		case strings.HasSuffix(path, "/api/v1/metadata"), strings.HasSuffix(path, "/api/v1/status/buildinfo"):
			// Metric names, help texts and the version: no series data.
		default:
			writeAPIError(w, &apiError{typ: errNotFound, err: fmt.Errorf("%s is not served to tenant-scoped callers", r.URL.Path)})
			return
		}
		next.ServeHTTP(w, withForm(r, form))
	})
}

func labelValuesPath(path string) bool {
	i := strings.Index(path, "/api/v1/label/")
	return i >= 0 && strings.HasSuffix(path, "/values")
}

// withForm is r carrying form as its only parameters: in the body of a
// POST, in the URL of anything else, so both the embedded API and the
// proxy read exactly the narrowed values.
func withForm(r *http.Request, form url.Values) *http.Request {
	out := r.Clone(r.Context())
	enc := form.Encode()
	out.Form, out.PostForm = nil, nil
	if r.Method == http.MethodPost {
		out.URL.RawQuery = ""
		out.Body = io.NopCloser(strings.NewReader(enc))
		out.ContentLength = int64(len(enc))
		out.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		out.Header.Set("Content-Length", strconv.Itoa(len(enc)))
		return out
	}
	out.URL.RawQuery = enc
	return out
}
