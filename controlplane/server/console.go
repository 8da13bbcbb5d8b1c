package server

import (
	"io"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"

	"github.com/heteroflow/heteroflow/controlplane/httpapi"
)

// ConsoleCSP lets the built console load only its own files. Inline styles
// are allowed because antd injects CSS-in-JS at run time; scripts are not.
const ConsoleCSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
	"font-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'; object-src 'none'"

// apiPrefixes are forwarded from the console listener to the API handler.
// /metrics is not among them: on the console it is the Metrics explorer
// page; the server's own metrics are on the API listener (authenticated)
// or on metrics_addr.
var apiPrefixes = []string{"/api/", "/health", "/prometheus/",
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
		if servePrecompressed(w, r, dist, p) {
			return
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

// precompressed are the encodings the console build writes beside each
// asset (web/vite.config.ts), best first.
var precompressed = []struct{ token, ext string }{{"br", ".br"}, {"gzip", ".gz"}}

// servePrecompressed answers with p's brotli or gzip twin when the client
// accepts it and the build made one; it reports whether it answered.
func servePrecompressed(w http.ResponseWriter, r *http.Request, dist fs.FS, p string) bool {
	ct := mime.TypeByExtension(path.Ext(p))
	if ct == "" || strings.HasSuffix(p, ".br") || strings.HasSuffix(p, ".gz") {
		return false
	}
	w.Header().Add("Vary", "Accept-Encoding")
	accepted := acceptedEncodings(r.Header.Get("Accept-Encoding"))
	for _, enc := range precompressed {
		if !accepted[enc.token] {
			continue
		}
		f, err := dist.Open(p + enc.ext)
		if err != nil {
			continue
		}
		st, err := f.Stat()
		rs, seekable := f.(io.ReadSeeker)
		if err != nil || !seekable {
			_ = f.Close()
			continue
		}
		w.Header().Set("Content-Type", ct)
		w.Header().Set("Content-Encoding", enc.token)
		http.ServeContent(w, r, p, st.ModTime(), rs)
		_ = f.Close()
		return true
	}
	return false
}

// acceptedEncodings parses Accept-Encoding, leaving out codings with q=0.
func acceptedEncodings(h string) map[string]bool {
	out := map[string]bool{}
	for _, part := range strings.Split(h, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		name = strings.ToLower(strings.TrimSpace(name))
		if name == "" {
			continue
		}
		if q, ok := strings.CutPrefix(strings.ReplaceAll(params, " ", ""), "q="); ok {
			if v, err := strconv.ParseFloat(q, 64); err == nil && v == 0 {
				continue
			}
		}
		out[name] = true
	}
	return out
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
