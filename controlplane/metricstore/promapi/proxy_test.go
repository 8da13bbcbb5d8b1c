package promapi_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane/metricstore/promapi"
)

// TestProxyForwardsOnlyTheQueryAPI: in remote mode /prometheus passes on
// the read endpoints the embedded API serves, and nothing else — the
// remote store's admin API (VictoriaMetrics and Prometheus delete series
// there), its import and export endpoints would otherwise be open to
// every caller with metrics:read, with the store's own credentials.
func TestProxyForwardsOnlyTheQueryAPI(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	remote := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"success","data":[]}`)
	}))
	t.Cleanup(remote.Close)
	p, err := promapi.NewProxy(remote.URL, http.DefaultTransport, nil)
	require.NoError(t, err)
	r := chi.NewRouter()
	p.Routes(r)
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)

	call := func(method, path string) int {
		req, err := http.NewRequestWithContext(t.Context(), method, srv.URL+path, strings.NewReader("match[]=up"))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		res, err := srv.Client().Do(req)
		require.NoError(t, err)
		_ = res.Body.Close()
		return res.StatusCode
	}
	for _, c := range []struct{ method, path string }{
		{"GET", "/api/v1/query"}, {"POST", "/api/v1/query"}, {"GET", "/api/v1/query_range"}, {"POST", "/api/v1/query_range"},
		{"GET", "/api/v1/series"}, {"POST", "/api/v1/series"}, {"GET", "/api/v1/labels"}, {"POST", "/api/v1/labels"},
		{"GET", "/api/v1/label/job/values"}, {"GET", "/api/v1/metadata"}, {"GET", "/api/v1/query_exemplars"},
		{"POST", "/api/v1/query_exemplars"}, {"GET", "/api/v1/status/buildinfo"},
	} {
		require.Equal(t, http.StatusOK, call(c.method, c.path), "%s %s", c.method, c.path)
	}
	mu.Lock()
	forwarded := len(seen)
	mu.Unlock()
	require.Equal(t, 13, forwarded)
	for _, c := range []struct{ method, path string }{
		{"POST", "/api/v1/admin/tsdb/delete_series"}, {"GET", "/api/v1/admin/tsdb/delete_series"},
		{"PUT", "/api/v1/admin/tsdb/snapshot"}, {"POST", "/api/v1/import"}, {"POST", "/api/v1/import/prometheus"},
		{"GET", "/api/v1/export"}, {"POST", "/api/v1/write"}, {"GET", "/api/v1/status/tsdb"},
		{"DELETE", "/api/v1/query"}, {"PUT", "/api/v1/series"}, {"GET", "/api/v1/label/a/b/values"},
	} {
		require.Equal(t, http.StatusNotFound, call(c.method, c.path), "%s %s", c.method, c.path)
	}
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, seen, forwarded, "the remote store saw: %v", seen[forwarded:])
}
