package server

import (
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/heteroflow/heteroflow/controlplane/httpapi"
)

// ConsoleCSP lets the built console load only its own files. Inline styles
// are allowed because antd injects CSS-in-JS at run time; scripts are not.
const ConsoleCSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
	"font-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'; object-src 'none'"

// apiPrefixes are forwarded from the console listener to the API handler.
var apiPrefixes = []string{"/api/", "/health", "/metrics", "/prometheus/",
	// agent install: the agent binary and the one-command deploy script
	"/downloads/", "/deploy-agent-all-in-one.sh"}

// ConsoleHandler serves the single-page console from dist, falling back to
// index.html for client-side routes, and forwards API paths to api. When
// the console was not built it answers every page with a short bilingual
// note saying how to build it.
func ConsoleHandler(api http.Handler, dist fs.FS, built bool) http.Handler {
	files := http.FileServerFS(dist)
	spa := httpapi.SecurityHeaders(ConsoleCSP)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		if !built {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(notBuiltPage))
			return
		}
		p := strings.TrimPrefix(path.Clean(r.URL.Path), "/")
		if p == "" || p == "." {
			p = "index.html"
		}
		if st, err := fs.Stat(dist, p); err != nil || st.IsDir() {
			// Client-side route (e.g. /tasks/42): the SPA resolves it.
			serveIndex(w, r, dist)
			return
		}
		if strings.HasPrefix(p, "assets/") {
			// Vite fingerprints asset names, so they never change.
			w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			w.Header().Set("Cache-Control", "no-cache")
		}
		files.ServeHTTP(w, r)
	}))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, p := range apiPrefixes {
			if strings.HasPrefix(r.URL.Path, p) || r.URL.Path == strings.TrimSuffix(p, "/") {
				api.ServeHTTP(w, r)
				return
			}
		}
		spa.ServeHTTP(w, r)
	})
}

func serveIndex(w http.ResponseWriter, r *http.Request, dist fs.FS) {
	b, err := fs.ReadFile(dist, "index.html")
	if err != nil {
		http.Error(w, "console index.html missing", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(b)
}

const notBuiltPage = `<!doctype html>
<html lang="zh-CN"><head><meta charset="utf-8"><title>HeteroFlow</title></head>
<body>
<h1>HeteroFlow</h1>
<p>控制台尚未构建。请在源码目录运行 <code>make build</code>，然后重新启动服务器。API 已在运行：<a href="/health">/health</a>，<a href="/api/v1/openapi.json">/api/v1/openapi.json</a>。</p>
<p>The web console has not been built. Run <code>make build</code> in the source tree and restart the server. The API is running: <a href="/health">/health</a>, <a href="/api/v1/openapi.json">/api/v1/openapi.json</a>.</p>
</body></html>
`
