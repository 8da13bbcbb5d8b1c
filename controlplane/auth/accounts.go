package auth

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
)

// Account is what the authorization of every request reads about its
// caller besides the credential: the cluster role, the current tenant and
// the tenant memberships (with each tenant's disabled state). It is shared between
// requests: callers must not modify it or its memberships.
type Account struct {
	// Tenant is the user's current tenant as switched last (the access
	// token carries the one of its issue).
	Tenant string
	// Role is the user's cluster role now (an access token carries the
	// one of its issue).
	Role        controlplane.Role
	Status      controlplane.UserStatus
	Memberships []*controlplane.Membership
}

// accountTTL bounds how long a cached Account is used without a store
// read, on any server, whatever was or was not heard about changes.
const accountTTL = time.Second

// accountCache keeps each user's Account for accountTTL: at a few thousand
// requests a second the two store reads per request (memberships, user)
// were a tenth of the server's CPU and two round trips of its latency.
//
// Freshness. Every write on this server that changes a user's role,
// status, current tenant or memberships calls ForgetOwner, and a change of
// a tenant's state calls ForgetAccounts, after the write commits and
// before its request answers: this server's next request reads the store,
// so a removed member or a disabled user loses access at once here. Other
// servers on the same store drop their entries when the change reaches
// them through the credential change feed (PostgreSQL NOTIFY, normally
// milliseconds); an entry is never older than accountTTL, so a change the
// feed did not carry (feed down, a write by another program) takes effect
// on every server within a second.
type accountCache struct {
	mu sync.Mutex
	// gen counts drops. A load that began before a drop may have read
	// what the drop is about and is not kept.
	gen uint64
	m   map[int64]cachedAccount
	now func() time.Time
}

type cachedAccount struct {
	acc      *Account
	loadedAt time.Time
}

func newAccountCache(now func() time.Time) *accountCache {
	return &accountCache{m: map[int64]cachedAccount{}, now: now}
}

// get returns a fresh entry, or the generation a load must start from.
func (c *accountCache) get(userID int64) (*Account, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[userID]; ok && c.now().Sub(e.loadedAt) < accountTTL {
		return e.acc, 0
	}
	return nil, c.gen
}

// put keeps acc unless a drop happened since the load began at gen.
func (c *accountCache) put(userID int64, acc *Account, gen uint64, loadedAt time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen == gen {
		c.m[userID] = cachedAccount{acc: acc, loadedAt: loadedAt}
	}
}

func (c *accountCache) drop(userID int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	delete(c.m, userID)
}

func (c *accountCache) dropAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	clear(c.m)
}

// Account returns userID's current tenant and memberships, from the cache
// when loaded less than accountTTL ago and not dropped since (see
// accountCache). A user the store does not hold is the store's ErrNotFound.
func (s *Service) Account(ctx context.Context, userID int64) (*Account, error) {
	acc, gen := s.accounts.get(userID)
	if acc != nil {
		return acc, nil
	}
	loadedAt := s.cfg.Now()
	u, err := s.store.GetUser(ctx, userID)
	if err != nil {
		return nil, err
	}
	acc = &Account{Tenant: u.Tenant, Role: u.Role, Status: u.Status}
	if ts, ok := s.store.(controlplane.TenantStore); ok {
		if acc.Memberships, err = ts.ListMemberships(ctx, userID); err != nil {
			return nil, fmt.Errorf("load tenant memberships: %w", err)
		}
	}
	s.accounts.put(userID, acc, gen, loadedAt)
	return acc, nil
}

// ForgetAccounts drops every cached Account on every server: a tenant's
// state (disabled or not) is part of each member's memberships.
func (s *Service) ForgetAccounts() {
	s.accounts.dropAll()
	if s.feed == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.feed.PublishAuthChange(ctx, controlplane.AuthChange{All: true}); err != nil {
		// Other servers fall back on accountTTL.
		s.log.Warn("tenant change not sent to the other servers", "err", err)
	}
}
