package httpapi

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHTTPMetricsLabelsClosedSet sends requests with invented methods and
// random paths: the request counter must not grow a series per method or
// path, or any client could exhaust the server's memory.
func TestHTTPMetricsLabelsClosedSet(t *testing.T) {
	e := newEnv(t)
	for i := 0; i < 50; i++ {
		res := e.raw("FROB"+itoa(int64(i)), "/api/v1/tasks", "", nil)
		res.Body.Close()
		res = e.raw(http.MethodGet, "/no/such/path/"+itoa(int64(i)), "", nil)
		res.Body.Close()
	}
	mfs, err := e.api.Registry().Gather()
	require.NoError(t, err)
	methods, routes := map[string]bool{}, map[string]bool{}
	for _, mf := range mfs {
		if mf.GetName() != "heteroflow_http_requests_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				switch l.GetName() {
				case "method":
					methods[l.GetValue()] = true
				case "route":
					routes[l.GetValue()] = true
				}
			}
		}
	}
	require.True(t, methods["other"], "invented methods are counted as other: %v", methods)
	for m := range methods {
		require.Contains(t, []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "other"}, m)
	}
	for r := range routes {
		require.NotContains(t, r, "/no/such/path", "raw paths must not become labels")
	}
	require.LessOrEqual(t, len(routes), 5, "routes: %v", routes)
}
