package auth

import (
	"sync"
	"time"
)

// RateLimiter is a fixed-window counter per key (client IP for logins). It
// is in-process: several servers each enforce their own window, which still
// bounds guessing per server; lockout in the store bounds it globally.
type RateLimiter struct {
	mu     sync.Mutex
	limit  int
	window time.Duration
	now    func() time.Time
	hits   map[string]*window
}

type window struct {
	start time.Time
	count int
}

// NewRateLimiter allows limit events per window per key.
func NewRateLimiter(limit int, per time.Duration, now func() time.Time) *RateLimiter {
	if now == nil {
		now = time.Now
	}
	return &RateLimiter{limit: limit, window: per, now: now, hits: map[string]*window{}}
}

// Allow records one event for key and reports whether it is within the
// limit; when not, retryAfter says when the window resets.
func (l *RateLimiter) Allow(key string) (ok bool, retryAfter time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	w := l.hits[key]
	if w == nil || now.Sub(w.start) >= l.window {
		// Opportunistic sweep keeps the map from growing with one-off IPs.
		if len(l.hits) > 10000 {
			for k, v := range l.hits {
				if now.Sub(v.start) >= l.window {
					delete(l.hits, k)
				}
			}
		}
		w = &window{start: now}
		l.hits[key] = w
	}
	w.count++
	if w.count > l.limit {
		return false, w.start.Add(l.window).Sub(now)
	}
	return true, 0
}

// LockoutPolicy: after MaxFailures consecutive failed logins the account is
// locked for Duration, twice as long after each further lockout, at most
// MaxDuration. Kept in the user row so it holds across servers. Before it,
// a client address may fail IPFreeFailures times, then waits 1 s, 2 s, 4 s…
// (at most IPMaxBackoff) between attempts (see lockout.go).
type LockoutPolicy struct {
	MaxFailures    int
	Duration       time.Duration
	MaxDuration    time.Duration
	IPFreeFailures int
	IPMaxBackoff   time.Duration
}

// DefaultLockout: 10 failures → 15 minutes, then 30, 60, … up to a day;
// an address gets 3 free failures, then backs off up to 15 minutes.
var DefaultLockout = LockoutPolicy{MaxFailures: 10, Duration: 15 * time.Minute, MaxDuration: 24 * time.Hour,
	IPFreeFailures: 3, IPMaxBackoff: 15 * time.Minute}
