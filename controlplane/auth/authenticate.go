package auth

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
)

// keyCache holds API keys verified recently so that authenticating a key
// costs one SHA-256 and a map lookup, not a store read per request.
type keyCache struct {
	mu  sync.RWMutex
	ttl time.Duration
	now func() time.Time
	m   map[string]cachedKey // by prefix
	// live, when set, says whether the credential change feed is being
	// received; while it is not, entries are trusted for feedDownTTL at
	// most, since a revocation on another server would go unheard.
	live func() bool
}

// feedDownTTL bounds how stale a cached key may be while the credential
// change feed is down.
const feedDownTTL = time.Second

type cachedKey struct {
	key      *controlplane.APIKey
	owner    *controlplane.User
	loadedAt time.Time
}

func newKeyCache(ttl time.Duration, now func() time.Time) *keyCache {
	return &keyCache{ttl: ttl, now: now, m: map[string]cachedKey{}}
}

func (c *keyCache) get(prefix string) (cachedKey, bool) {
	c.mu.RLock()
	e, ok := c.m[prefix]
	c.mu.RUnlock()
	ttl := c.ttl
	if c.live != nil && !c.live() {
		ttl = min(ttl, feedDownTTL)
	}
	if !ok || c.now().Sub(e.loadedAt) >= ttl {
		return cachedKey{}, false
	}
	return e, true
}

func (c *keyCache) put(prefix string, e cachedKey) {
	c.mu.Lock()
	c.m[prefix] = e
	c.mu.Unlock()
}

func (c *keyCache) drop(prefix string) {
	c.mu.Lock()
	delete(c.m, prefix)
	c.mu.Unlock()
}

// dropOwner forgets every cached key of one owner.
func (c *keyCache) dropOwner(ownerID int64) {
	c.mu.Lock()
	for p, e := range c.m {
		if e.key.OwnerID == ownerID {
			delete(c.m, p)
		}
	}
	c.mu.Unlock()
}

// dropKey forgets the cached key with this id.
func (c *keyCache) dropKey(id int64) {
	c.mu.Lock()
	for p, e := range c.m {
		if e.key.ID == id {
			delete(c.m, p)
		}
	}
	c.mu.Unlock()
}

func (c *keyCache) dropAll() {
	c.mu.Lock()
	clear(c.m)
	c.mu.Unlock()
}

// ForgetOwner drops the cached API keys and Account of a user on every
// server, so that a change to the user (role, status, tenant, memberships,
// deletion) applies to the next request made with any of their
// credentials.
func (s *Service) ForgetOwner(userID int64) {
	s.keys.dropOwner(userID)
	s.accounts.drop(userID)
	if s.feed == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.feed.PublishAuthChange(ctx, controlplane.AuthChange{OwnerID: userID}); err != nil {
		// Other servers fall back on their key cache's bound.
		s.log.Warn("user change not sent to the other servers", "user", userID, "err", err)
	}
}

// onAuthChange applies a change published by any server to this one's
// key and account caches.
func (s *Service) onAuthChange(c controlplane.AuthChange) {
	switch {
	case c.All:
		s.keys.dropAll()
		s.accounts.dropAll()
	case c.KeyID != 0:
		s.keys.dropKey(c.KeyID)
		s.echoMu.Lock()
		if ch, ok := s.echoes[c.KeyID]; ok {
			close(ch)
			delete(s.echoes, c.KeyID)
		}
		s.echoMu.Unlock()
	default:
		s.keys.dropOwner(c.OwnerID)
		s.accounts.drop(c.OwnerID)
	}
}

// EffectiveKeyRole is the role an API key acts with: never more than its
// owner holds now. A human-role key acts with the lower of its own role
// and its owner's; an agent key is a node credential outside the human
// ladder and keeps the agent role while its owner is active (it can act
// only as its node).
func EffectiveKeyRole(key, owner controlplane.Role) controlplane.Role {
	if key == controlplane.RoleAgent {
		return key
	}
	if owner == controlplane.RoleAgent || rank[owner] == 0 {
		return "" // an owner outside the ladder lends no human role
	}
	if rank[owner] < rank[key] {
		return owner
	}
	return key
}

var errBadKey = fmt.Errorf("%w: invalid API key", controlplane.ErrUnauthenticated)

// AuthenticateKey is Authenticate for a credential sent as an API key (the
// X-API-Key header): anything but a well-formed, valid key is "invalid API
// key", never judged as the access token it is not.
func (s *Service) AuthenticateKey(ctx context.Context, credential, ip string) (*Principal, error) {
	if !LooksLikeAPIKey(credential) {
		return nil, errBadKey
	}
	return s.authenticateKey(ctx, credential, ip)
}

// Authenticate resolves a bearer credential (access JWT or API key) to a
// Principal. ip is recorded in the audit entry for API-key use.
func (s *Service) Authenticate(ctx context.Context, credential, ip string) (*Principal, error) {
	if LooksLikeAPIKey(credential) {
		return s.authenticateKey(ctx, credential, ip)
	}
	c, err := s.tokens.Verify(credential)
	if err != nil {
		return nil, err
	}
	id, err := c.UserID()
	if err != nil {
		return nil, err
	}
	return &Principal{UserID: id, Username: c.Username, Role: c.Role, Tenant: c.Tenant}, nil
}

func (s *Service) authenticateKey(ctx context.Context, credential, ip string) (*Principal, error) {
	prefix, secret, ok := ParseAPIKey(credential)
	if !ok {
		return nil, errBadKey
	}
	e, hit := s.keys.get(prefix)
	if !hit {
		k, err := s.store.GetAPIKeyByPrefix(ctx, prefix)
		if errors.Is(err, controlplane.ErrNotFound) {
			s.auditKey(ctx, prefix, ip, "failed: unknown key")
			return nil, errBadKey
		}
		if err != nil {
			return nil, fmt.Errorf("load api key: %w", err)
		}
		owner, err := s.store.GetUser(ctx, k.OwnerID)
		if err != nil && !errors.Is(err, controlplane.ErrNotFound) {
			return nil, fmt.Errorf("load api key owner: %w", err)
		}
		e = cachedKey{key: k, owner: owner, loadedAt: s.cfg.Now()}
	}
	now := s.cfg.Now()
	k := e.key
	var reason string
	switch {
	case !secretMatches(secret, k.SecretHash):
		reason = "failed: wrong secret"
	case k.RevokedAt != nil:
		reason = "failed: revoked"
	case k.ExpiresAt != nil && !now.Before(*k.ExpiresAt):
		reason = "failed: expired"
	case e.owner == nil || e.owner.Status != controlplane.UserActive:
		reason = "failed: owner missing or inactive"
	case EffectiveKeyRole(k.Role, e.owner.Role) == "":
		reason = "failed: owner holds no role the key can act with"
	}
	if reason != "" {
		s.keys.drop(prefix)
		s.auditKey(ctx, prefix, ip, reason)
		return nil, errBadKey
	}
	if !hit {
		// First use since load: audit it and record last use. Hits within
		// the cache TTL are neither audited nor touched, which keeps key
		// authentication off the store on the hot path.
		s.keys.put(prefix, e)
		if s.audited.due("apikey:"+prefix, now) {
			s.auditKey(ctx, prefix, ip, "ok")
		}
		if err := s.store.TouchAPIKey(ctx, k.ID, now); err != nil {
			s.log.Warn("touch api key", "prefix", prefix, "err", err)
		}
	}
	p := &Principal{UserID: k.OwnerID, Username: e.owner.Username, Role: EffectiveKeyRole(k.Role, e.owner.Role), Tenant: e.owner.Tenant,
		APIKeyID: k.ID, APIKeyPrefix: prefix, NodeID: k.NodeID, KeyTenant: k.Tenant}
	if k.Tenant != "" {
		p.Tenant = k.Tenant
	}
	return p, nil
}

func (s *Service) auditKey(ctx context.Context, prefix, ip, result string) {
	if s.cfg.Audit == nil {
		return
	}
	level := controlplane.LevelInfo
	if result != "ok" {
		level = controlplane.LevelWarn
	}
	s.cfg.Audit(ctx, &controlplane.AuditEntry{At: s.cfg.Now(), Actor: "apikey:" + prefix,
		Module: controlplane.ModuleAuth, Level: level, Action: "auth.apikey", Target: "apikey/" + prefix,
		SourceIP: ip, Result: result})
}

// CreateAPIKey mints a key for owner with role (at most the owner's own
// role, see CanGrant). The returned string is the only time the secret exists.
func (s *Service) CreateAPIKey(ctx context.Context, owner *Principal, name string, role controlplane.Role, nodeID string, expiresAt *time.Time) (string, *controlplane.APIKey, error) {
	return s.createKey(ctx, owner, name, role, nodeID, "", expiresAt)
}

// CreateTenantAPIKey mints a key that acts only in tenant, with role user
// or viewer (never a cluster role: its reach is its owner's membership of
// the tenant, which the API applies per request).
func (s *Service) CreateTenantAPIKey(ctx context.Context, owner *Principal, name string, role controlplane.Role, tenant string, expiresAt *time.Time) (string, *controlplane.APIKey, error) {
	if role != controlplane.RoleUser && role != controlplane.RoleViewer {
		return "", nil, controlplane.Invalidf("a tenant API key has role user or viewer, not %q", role)
	}
	if tenant == "" {
		return "", nil, controlplane.Invalidf("a tenant API key needs a tenant")
	}
	return s.createKey(ctx, owner, name, role, "", tenant, expiresAt)
}

func (s *Service) createKey(ctx context.Context, owner *Principal, name string, role controlplane.Role, nodeID, tenant string, expiresAt *time.Time) (string, *controlplane.APIKey, error) {
	switch {
	case name == "" || len(name) > 128:
		return "", nil, controlplane.Invalidf("name must be 1–128 characters")
	case !role.Valid():
		return "", nil, controlplane.Invalidf("role must be admin, operator, user, viewer or agent, not %q", role)
	case !CanGrant(owner.Role, role):
		return "", nil, fmt.Errorf("%w: a %s cannot create a key with role %s", controlplane.ErrForbidden, owner.Role, role)
	case expiresAt != nil && !expiresAt.After(s.cfg.Now()):
		return "", nil, controlplane.Invalidf("expires_at must be in the future")
	}
	key, prefix, hash, err := NewAPIKey()
	if err != nil {
		return "", nil, err
	}
	k := &controlplane.APIKey{Name: name, Prefix: prefix, SecretHash: hash, Role: role, OwnerID: owner.UserID,
		NodeID: nodeID, Tenant: tenant, ExpiresAt: expiresAt, CreatedAt: s.cfg.Now()}
	if err := s.store.CreateAPIKey(ctx, k); err != nil {
		return "", nil, fmt.Errorf("store api key: %w", err)
	}
	return key, k, nil
}

// RevokeAPIKey revokes the key and drops it from every server's cache.
// With several servers it returns once its own server has heard the
// change back from the feed (at most echoWait): the store sends a
// notification to every listening server at once, so by then the others
// have been sent it too.
func (s *Service) RevokeAPIKey(ctx context.Context, k *controlplane.APIKey) error {
	if err := s.store.RevokeAPIKey(ctx, k.ID, s.cfg.Now()); err != nil {
		return fmt.Errorf("revoke api key: %w", err)
	}
	s.keys.drop(k.Prefix)
	if s.feed == nil {
		return nil
	}
	echo := make(chan struct{})
	s.echoMu.Lock()
	s.echoes[k.ID] = echo
	s.echoMu.Unlock()
	defer func() {
		s.echoMu.Lock()
		if s.echoes[k.ID] == echo {
			delete(s.echoes, k.ID)
		}
		s.echoMu.Unlock()
	}()
	if err := s.feed.PublishAuthChange(ctx, controlplane.AuthChange{KeyID: k.ID}); err != nil {
		// Revoked in the store; other servers fall back on their key
		// cache's bound (feedDownTTL while their feed is down).
		s.log.Warn("key revocation not sent to the other servers", "key", k.Prefix, "err", err)
		return nil
	}
	if s.feed.AuthChangesLive() {
		select {
		case <-echo:
		case <-time.After(echoWait):
		case <-ctx.Done():
		}
	}
	return nil
}

// echoWait bounds how long a revocation waits to hear itself back.
const echoWait = 2 * time.Second
