package httpapi

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/auth"
)

// RateLimits is the API gateway's request budget (the brief's 限流): each
// caller — an API key, a user, or for anonymous requests the client
// address — may make PerMinute requests per minute with bursts of Burst.
// Node agents are budgeted separately (AgentPerMinute) so a fleet's
// heartbeats and polls never starve people, nor people the fleet. Zero
// PerMinute turns the limit off.
type RateLimits struct {
	PerMinute      int `yaml:"per_minute" json:"per_minute"`
	Burst          int `yaml:"burst" json:"burst"`
	AgentPerMinute int `yaml:"agent_per_minute" json:"agent_per_minute"`
	// QueryConcurrency bounds each caller's PromQL queries in flight
	// under /prometheus (0 = unbounded).
	QueryConcurrency int `yaml:"query_concurrency" json:"query_concurrency"`
}

// DefaultRateLimits: 3000 requests a minute (50 a second) with bursts of
// 500 per person or key — a console page polling a dozen panels stays far
// below — 6000 a minute per agent (heartbeats, long-polls, status and log
// pushes), 8 PromQL queries at once per caller.
func DefaultRateLimits() RateLimits {
	return RateLimits{PerMinute: 3000, Burst: 500, AgentPerMinute: 6000, QueryConcurrency: 8}
}

// tokenBuckets is a token bucket per key.
type tokenBuckets struct {
	mu      sync.Mutex
	rate    float64 // tokens per second
	burst   float64
	now     func() time.Time
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

func newTokenBuckets(perMinute, burst int, now func() time.Time) *tokenBuckets {
	if burst < 1 {
		burst = 1
	}
	return &tokenBuckets{rate: float64(perMinute) / 60, burst: float64(burst), now: now, buckets: map[string]*bucket{}}
}

// take spends one token of key; when none is left it says how long until one is.
func (t *tokenBuckets) take(key string) (bool, time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	b := t.buckets[key]
	if b == nil {
		if len(t.buckets) > 100000 {
			for k, v := range t.buckets { // full buckets carry no state
				if v.tokens+now.Sub(v.at).Seconds()*t.rate >= t.burst {
					delete(t.buckets, k)
				}
			}
		}
		b = &bucket{tokens: t.burst, at: now}
		t.buckets[key] = b
	}
	b.tokens = min(t.burst, b.tokens+now.Sub(b.at).Seconds()*t.rate)
	b.at = now
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, time.Duration((1 - b.tokens) / t.rate * float64(time.Second))
}

// rateKey names the caller a request is charged to.
func rateKey(r *http.Request) (key string, agent bool) {
	if p := PrincipalFrom(r.Context()); p != nil {
		if p.APIKeyPrefix != "" {
			return "key:" + p.APIKeyPrefix, p.Role == controlplane.RoleAgent
		}
		return "user:" + strconv.FormatInt(p.UserID, 10), false
	}
	return "ip:" + ClientIP(r.Context()), false
}

// rateLimit answers 429 with Retry-After once a caller spent its budget.
// Health checks are exempt (load balancers poll them).
func (a *API) rateLimit(next http.Handler) http.Handler {
	l := a.opts.RateLimits
	if l.PerMinute <= 0 {
		return next
	}
	people := newTokenBuckets(l.PerMinute, l.Burst, a.now)
	agentRate := l.AgentPerMinute
	if agentRate <= 0 {
		agentRate = l.PerMinute
	}
	agents := newTokenBuckets(agentRate, max(l.Burst, agentRate/5), a.now)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" || r.URL.Path == "/health/live" || r.URL.Path == "/health/ready" {
			next.ServeHTTP(w, r)
			return
		}
		key, agent := rateKey(r)
		b := people
		if agent {
			b = agents
		}
		if ok, retry := b.take(key); !ok {
			writeAPIError(w, r, toAPIError(a.log, &auth.RateLimitError{RetryAfter: retry}))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// QueryConcurrency limits each caller's requests in flight through h to n
// (0 = unbounded), answering 429 in Prometheus' error envelope beyond it,
// so one dashboard cannot take every query slot of the engine.
func QueryConcurrency(n int, h http.Handler) http.Handler {
	if n <= 0 {
		return h
	}
	var mu sync.Mutex
	inflight := map[string]int{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, _ := rateKey(r)
		mu.Lock()
		if inflight[key] >= n {
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"status":"error","errorType":"too_many_requests","error":"more than ` +
				strconv.Itoa(n) + ` queries in flight for this caller; retry when one finished"}`))
			return
		}
		inflight[key]++
		mu.Unlock()
		defer func() {
			mu.Lock()
			if inflight[key]--; inflight[key] == 0 {
				delete(inflight, key)
			}
			mu.Unlock()
		}()
		h.ServeHTTP(w, r)
	})
}
