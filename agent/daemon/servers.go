package daemon

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// ServerList is Config.Server split into its URLs: the agent takes every
// server of an HA control plane (a comma list; the command joins repeated
// --server flags into one) and fails over between them.
func (c Config) ServerList() []string {
	var out []string
	for _, s := range strings.Split(c.Server, ",") {
		if s = strings.TrimRight(strings.TrimSpace(s), "/"); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// endpoint is one place the agent can reach a server: a configured URL,
// or one address of a name that resolved to several.
type endpoint struct {
	base string
	http *http.Client
}

// servers is the agent's view of the control plane's servers: the
// endpoints in order and the one that answered last. A name resolving to
// several addresses becomes one endpoint per address (dialled directly,
// the URL's host still used for TLS verification); names are resolved
// again after a round in which no endpoint answered.
type servers struct {
	urls    []string
	timeout time.Duration
	tc      *tls.Config
	lookup  func(ctx context.Context, host string) ([]string, error)

	mu    sync.Mutex
	eps   []endpoint
	cur   int
	stale bool
}

func newServers(list []string, timeout time.Duration, tc *tls.Config, lookup func(context.Context, string) ([]string, error)) *servers {
	if lookup == nil {
		lookup = net.DefaultResolver.LookupHost
	}
	s := &servers{urls: list, timeout: timeout, tc: tc, lookup: lookup, stale: true}
	return s
}

// snapshot returns the endpoints and the index to start from, resolving
// names first when the list is stale.
func (s *servers) snapshot(ctx context.Context) ([]endpoint, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stale || len(s.eps) == 0 {
		s.resolve(ctx)
	}
	return s.eps, s.cur
}

// answered makes the endpoint at i the one tried first from now on.
func (s *servers) answered(eps []endpoint, i int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(eps) == len(s.eps) && len(eps) > 0 && &eps[0] == &s.eps[0] {
		s.cur = i
	}
}

// failed marks a full round without an answer: names are resolved again.
func (s *servers) failed() {
	s.mu.Lock()
	s.stale = true
	s.mu.Unlock()
}

// current is the base URL of the endpoint tried first.
func (s *servers) current() string {
	eps, cur := s.snapshot(context.Background())
	return eps[cur].base
}

func (s *servers) resolve(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for _, ep := range s.eps {
		ep.http.CloseIdleConnections()
	}
	var eps []endpoint
	for _, raw := range s.urls {
		u, err := url.Parse(raw)
		if err != nil {
			continue // Validate refused it already
		}
		host, port := u.Hostname(), u.Port()
		if port == "" {
			port = map[string]string{"https": "443"}[u.Scheme]
			if port == "" {
				port = "80"
			}
		}
		var addrs []string
		if net.ParseIP(host) == nil {
			addrs, _ = s.lookup(ctx, host)
		}
		if len(addrs) <= 1 {
			eps = append(eps, endpoint{base: raw, http: s.client("")})
			continue
		}
		for _, a := range addrs {
			eps = append(eps, endpoint{base: raw, http: s.client(net.JoinHostPort(a, port))})
		}
	}
	prev := ""
	if s.cur < len(s.eps) {
		prev = s.eps[s.cur].base
	}
	s.eps, s.cur, s.stale = eps, 0, false
	for i, ep := range eps {
		if ep.base == prev {
			s.cur = i
			break
		}
	}
}

// client is an HTTP client that dials addr ("" = the URL's host).
func (s *servers) client(addr string) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = s.tc
	// A server killed mid-connection is noticed by the next call's error;
	// idle connections are not kept long so the next one dials afresh.
	t.IdleConnTimeout = 30 * time.Second
	if addr != "" {
		d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
		t.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, addr)
		}
	}
	return &http.Client{Timeout: s.timeout, Transport: t}
}

// unavailable reports an answer that another server may not give: the
// server is shutting down, or a proxy in front of it found no backend.
func unavailable(code int) bool {
	return code == http.StatusBadGateway || code == http.StatusServiceUnavailable || code == http.StatusGatewayTimeout
}

// transient reports a transport error worth trying the next endpoint for
// (everything but the caller's own cancellation).
func transient(ctx context.Context, err error) bool {
	return err != nil && ctx.Err() == nil && !errors.Is(err, context.Canceled)
}

// checkServers validates every URL of Server and returns the first; all
// must share one scheme (one TLS set-up serves them all).
func (c Config) checkServers() (*url.URL, error) {
	list := c.ServerList()
	if len(list) == 0 {
		return nil, errors.New("--server is required: http(s)://host:port, repeatable or a comma list / 需要服务器地址（可重复或逗号分隔）")
	}
	var first *url.URL
	for _, s := range list {
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("--server %q must be http(s)://host:port / 服务器地址无效", s)
		}
		if first == nil {
			first = u
		} else if u.Scheme != first.Scheme {
			return nil, fmt.Errorf("--server %q: every server must use %s:// like %s / 所有服务器地址必须使用同一协议", s, first.Scheme, list[0])
		}
	}
	return first, nil
}

// closeIdle drops the idle connections to every endpoint, so the next
// request handshakes again (with a renewed client certificate).
func (s *servers) closeIdle() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ep := range s.eps {
		ep.http.CloseIdleConnections()
	}
}
