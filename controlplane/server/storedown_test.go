package server

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane/postgres/pgtest"
)

// tcpProxy forwards a local port to target until cut, which closes every
// connection and refuses new ones: the database "goes down".
type tcpProxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
	down  bool
}

func newTCPProxy(t *testing.T, target string) *tcpProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &tcpProxy{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			if p.down {
				p.mu.Unlock()
				c.Close()
				continue
			}
			u, err := net.Dial("tcp", target)
			if err != nil {
				p.mu.Unlock()
				c.Close()
				continue
			}
			p.conns = append(p.conns, c, u)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(u, c); u.Close() }()
			go func() { _, _ = io.Copy(c, u); c.Close() }()
		}
	}()
	t.Cleanup(func() { ln.Close(); p.cut() })
	return p
}

func (p *tcpProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// TestStoreDownAnswers503: with PostgreSQL gone, login and the API answer
// 503 (retry later), not 500, and /health turns degraded while telling
// anonymous callers nothing about the database.
func TestStoreDownAnswers503(t *testing.T) {
	dsn := pgtest.Schema(t)
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	proxy := newTCPProxy(t, u.Host)
	u.Host = proxy.ln.Addr().String()
	q := u.Query()
	q.Set("connect_timeout", "2")
	u.RawQuery = q.Encode()
	s, _ := startServer(t, u.String(), map[string]string{EnvAdminPassword: "Root-Password-123"})
	base := "http://" + s.APIAddr()

	get := func(path string) (int, string) {
		res, err := http.Get(base + path)
		require.NoError(t, err)
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	st, body := get("/health")
	require.Equal(t, http.StatusOK, st, body)
	require.JSONEq(t, `{"status":"ok"}`, body, "anonymous callers see only the status")
	st, _ = get("/health/live")
	require.Equal(t, http.StatusOK, st)

	proxy.cut()
	time.Sleep(healthCacheTTLForTest)
	st, body = get("/health/ready")
	require.Equal(t, http.StatusServiceUnavailable, st)
	require.JSONEq(t, `{"status":"degraded"}`, body)
	require.NotContains(t, body, u.Hostname())
	st, _ = get("/health/live")
	require.Equal(t, http.StatusOK, st, "the process is alive even when the store is not")

	res, err := http.Post(base+"/api/v1/auth/login", "application/json",
		strings.NewReader(`{"username":"admin","password":"Root-Password-123"}`))
	require.NoError(t, err)
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	require.Equal(t, http.StatusServiceUnavailable, res.StatusCode, string(b))
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(b, &e))
	require.Equal(t, "unavailable", e.Error.Code)
}
