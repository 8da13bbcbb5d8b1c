package auth

import (
	"sync"
	"time"
)

// Login defences, in the order a guess meets them:
//
//  1. attempts per client IP per window (RateLimiter): 429;
//  2. failed logins per client IP (ipBackoff): after IPFreeFailures
//     failures an address waits 1 s, then 2 s, 4 s, … (at most
//     IPMaxBackoff) before its next attempt: 429 with Retry-After. One
//     address cannot make enough guesses to lock anyone out quickly;
//  3. failed logins per account (in the store, counted atomically):
//     after MaxFailures the account is locked for Duration, doubling with
//     each successive lockout up to MaxDuration. A lock does not apply to
//     addresses the user logged in from recently (trustedIPs), so
//     locking "admin" from elsewhere does not lock its owner out; an
//     administrator (API) or the operator on the server machine
//     (`heteroflow user unlock`) lifts a lock at once.
//
// Every refusal of a password answers the same way whether the username
// exists, the password was wrong or the account is locked.

// ipBackoff tracks failed logins per client address.
type ipBackoff struct {
	mu    sync.Mutex
	free  int
	max   time.Duration
	now   func() time.Time
	state map[string]*ipFailures
}

type ipFailures struct {
	count int
	until time.Time // no attempt before this
	last  time.Time
}

func newIPBackoff(free int, max time.Duration, now func() time.Time) *ipBackoff {
	return &ipBackoff{free: free, max: max, now: now, state: map[string]*ipFailures{}}
}

// wait reports how long ip must still wait before its next attempt.
func (b *ipBackoff) wait(ip string) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	f := b.state[ip]
	if f == nil {
		return 0
	}
	if d := f.until.Sub(b.now()); d > 0 {
		return d
	}
	return 0
}

// fail records a failure from ip.
func (b *ipBackoff) fail(ip string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	if len(b.state) > 10000 {
		// Forget addresses quiet for longer than the longest backoff.
		for k, v := range b.state {
			if now.Sub(v.last) > 2*b.max {
				delete(b.state, k)
			}
		}
	}
	f := b.state[ip]
	if f == nil || now.Sub(f.last) > 2*b.max {
		f = &ipFailures{}
		b.state[ip] = f
	}
	f.count++
	f.last = now
	if over := f.count - b.free; over > 0 {
		d := time.Second << min(over-1, 20)
		f.until = now.Add(min(d, b.max))
	}
}

// reset forgets ip's failures after a good login.
func (b *ipBackoff) reset(ip string) {
	b.mu.Lock()
	delete(b.state, ip)
	b.mu.Unlock()
}

// trustedIPs remembers, per user, the addresses of recent good logins.
type trustedIPs struct {
	mu  sync.Mutex
	ttl time.Duration
	now func() time.Time
	m   map[int64]map[string]time.Time
}

const maxTrustedPerUser = 8

func newTrustedIPs(ttl time.Duration, now func() time.Time) *trustedIPs {
	return &trustedIPs{ttl: ttl, now: now, m: map[int64]map[string]time.Time{}}
}

func (t *trustedIPs) add(user int64, ip string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ips := t.m[user]
	if ips == nil {
		ips = map[string]time.Time{}
		t.m[user] = ips
	}
	ips[ip] = t.now()
	for len(ips) > maxTrustedPerUser {
		var oldest string
		for k, v := range ips {
			if oldest == "" || v.Before(ips[oldest]) {
				oldest = k
			}
		}
		delete(ips, oldest)
	}
}

func (t *trustedIPs) has(user int64, ip string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	at, ok := t.m[user][ip]
	return ok && t.now().Sub(at) < t.ttl
}

// lockFor is how long the account is locked after previous lockouts.
func (p LockoutPolicy) lockFor(previous int) time.Duration {
	d := p.Duration << min(previous, 20)
	if p.MaxDuration > 0 && (d > p.MaxDuration || d <= 0) {
		return p.MaxDuration
	}
	return d
}
