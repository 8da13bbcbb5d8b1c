package server

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"
)

func consoleFS() fstest.MapFS {
	return fstest.MapFS{
		"index.html":               {Data: []byte("<!doctype html><title>HeteroFlow</title>")},
		"assets/app-1a2b.js":       {Data: []byte("console.log('plain')")},
		"assets/app-1a2b.js.gz":    {Data: []byte("GZIP-BYTES")},
		"assets/app-1a2b.js.br":    {Data: []byte("BROTLI-BYTES")},
		"assets/only-gz-9f.css":    {Data: []byte("body{}")},
		"assets/only-gz-9f.css.gz": {Data: []byte("GZ-CSS")},
	}
}

func get(t *testing.T, h http.Handler, path string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	res := rec.Result()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// The console's /metrics is the Metrics explorer page (reloads and shared
// links land on the SPA), never the server's Prometheus text.
func TestConsoleMetricsRouteIsThePage(t *testing.T) {
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "api:"+r.URL.Path)
	})
	h := ConsoleHandler(api, consoleFS(), true)
	for _, p := range []string{"/metrics", "/metrics?q=up", "/alerts"} {
		res, body := get(t, h, p, nil)
		require.Equal(t, http.StatusOK, res.StatusCode, p)
		require.Contains(t, body, "<!doctype html>", p)
		require.Equal(t, "no-cache", res.Header.Get("Cache-Control"), p)
	}
	for _, p := range []string{"/api/v1/tasks", "/health", "/prometheus/api/v1/query"} {
		_, body := get(t, h, p, nil)
		require.Equal(t, "api:"+p, body, p)
	}
}

func TestConsoleServesPrecompressedAssets(t *testing.T) {
	h := ConsoleHandler(http.NotFoundHandler(), consoleFS(), true)

	res, body := get(t, h, "/assets/app-1a2b.js", map[string]string{"Accept-Encoding": "gzip, deflate, br"})
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "BROTLI-BYTES", body)
	require.Equal(t, "br", res.Header.Get("Content-Encoding"))
	require.Contains(t, res.Header.Get("Content-Type"), "javascript")
	require.Contains(t, res.Header.Values("Vary"), "Accept-Encoding")
	require.Equal(t, "public, max-age=31536000, immutable", res.Header.Get("Cache-Control"))

	res, body = get(t, h, "/assets/app-1a2b.js", map[string]string{"Accept-Encoding": "gzip, br;q=0"})
	require.Equal(t, "GZIP-BYTES", body)
	require.Equal(t, "gzip", res.Header.Get("Content-Encoding"))

	res, body = get(t, h, "/assets/only-gz-9f.css", map[string]string{"Accept-Encoding": "br, gzip"})
	require.Equal(t, "GZ-CSS", body, "falls back to gzip when no brotli twin exists")
	require.Equal(t, "gzip", res.Header.Get("Content-Encoding"))
	require.Contains(t, res.Header.Get("Content-Type"), "text/css")

	res, body = get(t, h, "/assets/app-1a2b.js", nil)
	require.Equal(t, "console.log('plain')", body)
	require.Empty(t, res.Header.Get("Content-Encoding"))
}
