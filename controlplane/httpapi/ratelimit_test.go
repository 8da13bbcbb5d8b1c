package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/auth"
)

// TestRateLimitPerCaller: each caller has its own budget, 429 carries
// Retry-After, agents are budgeted apart, and the budget refills.
func TestRateLimitPerCaller(t *testing.T) {
	e := newEnv(t, func(_ *auth.Config, o *Options) {
		o.RateLimits = RateLimits{PerMinute: 60, Burst: 5, AgentPerMinute: 600}
	})
	user, viewer, agent := e.tokens[controlplane.RoleUser], e.tokens[controlplane.RoleViewer], e.tokens[controlplane.RoleAgent]
	get := func(tok string) *http.Response {
		res := e.raw(http.MethodGet, "/api/v1/tasks", tok, nil)
		res.Body.Close()
		return res
	}
	// newEnv's four logins came from this address, not these users.
	for range 5 {
		require.Equal(t, http.StatusOK, get(user).StatusCode)
	}
	res := get(user)
	require.Equal(t, http.StatusTooManyRequests, res.StatusCode)
	require.Equal(t, "1", res.Header.Get("Retry-After"))
	require.Equal(t, http.StatusOK, get(viewer).StatusCode, "another caller has its own budget")
	for range 10 {
		require.Equal(t, http.StatusOK, get(agent).StatusCode, "agents are budgeted apart")
	}
	res = e.raw(http.MethodGet, "/health", "", nil)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode, "health checks are exempt")
	e.clock.Advance(time.Second)
	require.Equal(t, http.StatusOK, get(user).StatusCode, "one request a second refills")
	require.Equal(t, http.StatusTooManyRequests, get(user).StatusCode)
}

// TestQueryConcurrencyPerCaller: a caller with n queries in flight gets
// 429 for the next; another caller is not held up.
func TestQueryConcurrencyPerCaller(t *testing.T) {
	release := make(chan struct{})
	var started sync.WaitGroup
	h := QueryConcurrency(2, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		started.Done()
		<-release
	}))
	as := func(p *auth.Principal) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/api/v1/query", nil)
		return r.WithContext(context.WithValue(r.Context(), keyPrincipal, p))
	}
	alice := &auth.Principal{UserID: 1, Role: controlplane.RoleViewer}
	bob := &auth.Principal{UserID: 2, Role: controlplane.RoleViewer}
	var done sync.WaitGroup
	for range 2 {
		started.Add(1)
		done.Add(1)
		go func() { defer done.Done(); h.ServeHTTP(httptest.NewRecorder(), as(alice)) }()
	}
	started.Wait()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, as(alice))
	require.Equal(t, http.StatusTooManyRequests, w.Code)
	require.Contains(t, w.Body.String(), `"errorType":"too_many_requests"`)
	started.Add(1)
	done.Add(1)
	go func() { defer done.Done(); h.ServeHTTP(httptest.NewRecorder(), as(bob)) }()
	started.Wait()
	close(release)
	done.Wait()
}
