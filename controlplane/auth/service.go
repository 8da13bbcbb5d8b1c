package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
)

// Config tunes a Service. Zero fields take the defaults in DefaultConfig.
type Config struct {
	AccessTTL   time.Duration // access JWT lifetime
	RefreshTTL  time.Duration // refresh token lifetime (each rotation starts a new one)
	SigningKey  []byte        // HS256 key, ≥ 32 bytes
	Argon2      Argon2Params
	Policy      PasswordPolicy
	Lockout     LockoutPolicy
	LoginLimit  int           // login attempts per IP per LoginWindow
	LoginWindow time.Duration //
	// APIKeyCacheTTL bounds how long a verified key is trusted without a
	// store read; a revoke on another server takes effect within it.
	APIKeyCacheTTL time.Duration
	Now            func() time.Time
	// Audit receives auth events the Service sees first (API-key use).
	Audit func(ctx context.Context, e *controlplane.AuditEntry)
	// Directory, when set, signs in users the store does not hold and
	// every account it created (LDAP).
	Directory Directory
}

// DefaultConfig: 15-minute access tokens, 7-day refresh tokens, 10 logins
// per IP per minute, 5 failures lock the account for 15 minutes.
func DefaultConfig() Config {
	return Config{
		AccessTTL:      15 * time.Minute,
		RefreshTTL:     7 * 24 * time.Hour,
		Argon2:         DefaultArgon2,
		Policy:         DefaultPolicy,
		Lockout:        DefaultLockout,
		LoginLimit:     10,
		LoginWindow:    time.Minute,
		APIKeyCacheTTL: 30 * time.Second,
		Now:            time.Now,
	}
}

// Service authenticates users and API keys against a Store.
type Service struct {
	store   controlplane.Store
	cfg     Config
	tokens  *TokenIssuer
	limiter *RateLimiter
	ipFails *ipBackoff
	trusted *trustedIPs
	keys    *keyCache
	// accounts holds each user's current tenant and memberships briefly
	// (accounts.go).
	accounts *accountCache
	// feed carries credential changes between the servers of one store;
	// nil when the store serves one server only.
	feed controlplane.AuthChangeFeed
	// echoes are revocations waiting to hear their own change come back
	// from the feed (then every server's listener has been sent it).
	echoMu  sync.Mutex
	echoes  map[int64]chan struct{}
	audited auditOnce // successful authentications audited once per period
	log     *slog.Logger
	// dummyHash equalises timing between unknown and known usernames.
	dummyHash string
}

// Principal is the authenticated caller of a request.
type Principal struct {
	UserID   int64
	Username string
	Role     controlplane.Role
	Tenant   string
	// APIKeyID/APIKeyPrefix are set when the caller used an API key.
	APIKeyID     int64
	APIKeyPrefix string
	// NodeID is the node an agent key is bound to ("" otherwise).
	NodeID string
	// Memberships are the caller's tenant roles, loaded per request by the
	// API (nil for agents); see tenancy.go.
	Memberships []*controlplane.Membership
	// KeyTenant is the tenant a tenant-scoped API key acts in ("" else):
	// such a caller is never cluster-wide and belongs only to that tenant.
	KeyTenant string
}

// Actor is the audit log's name for the principal.
func (p *Principal) Actor() string {
	if p == nil {
		return "anonymous"
	}
	if p.APIKeyPrefix != "" {
		return "apikey:" + p.APIKeyPrefix
	}
	return p.Username
}

// Session is what a login or refresh hands back.
type Session struct {
	AccessToken  string
	RefreshToken string
	ExpiresAt    time.Time
	User         *controlplane.User
}

// ErrRateLimited: too many attempts; RateLimitError carries when to retry.
var ErrRateLimited = errors.New("too many requests")

// RateLimitError is returned by Login when the caller's IP is over its limit.
type RateLimitError struct{ RetryAfter time.Duration }

func (e *RateLimitError) Error() string {
	return fmt.Sprintf("too many login attempts; retry in %s", e.RetryAfter.Round(time.Second))
}
func (e *RateLimitError) Is(target error) bool { return target == ErrRateLimited }

// ErrRefreshReuse: a rotated refresh token was presented again; the family
// has been revoked. It wraps ErrUnauthenticated.
var ErrRefreshReuse = fmt.Errorf("%w: refresh token reuse detected; all sessions of this login were revoked", controlplane.ErrUnauthenticated)

// errBadLogin is the one answer to a refused password: it does not say
// whether the username exists, the password was wrong or the account is
// locked.
var errBadLogin = fmt.Errorf("%w: invalid username or password, or the account is temporarily locked", controlplane.ErrUnauthenticated)

// New builds a Service. cfg.SigningKey is required.
func New(store controlplane.Store, cfg Config, log *slog.Logger) (*Service, error) {
	def := DefaultConfig()
	if cfg.AccessTTL == 0 {
		cfg.AccessTTL = def.AccessTTL
	}
	if cfg.RefreshTTL == 0 {
		cfg.RefreshTTL = def.RefreshTTL
	}
	if cfg.Argon2 == (Argon2Params{}) {
		cfg.Argon2 = def.Argon2
	}
	if cfg.Policy == (PasswordPolicy{}) {
		cfg.Policy = def.Policy
	}
	if cfg.Lockout.MaxFailures == 0 {
		cfg.Lockout.MaxFailures = def.Lockout.MaxFailures
	}
	if cfg.Lockout.Duration == 0 {
		cfg.Lockout.Duration = def.Lockout.Duration
	}
	if cfg.Lockout.MaxDuration == 0 {
		cfg.Lockout.MaxDuration = def.Lockout.MaxDuration
	}
	if cfg.Lockout.IPFreeFailures == 0 {
		cfg.Lockout.IPFreeFailures = def.Lockout.IPFreeFailures
	}
	if cfg.Lockout.IPMaxBackoff == 0 {
		cfg.Lockout.IPMaxBackoff = def.Lockout.IPMaxBackoff
	}
	if cfg.LoginLimit == 0 {
		cfg.LoginLimit = def.LoginLimit
	}
	if cfg.LoginWindow == 0 {
		cfg.LoginWindow = def.LoginWindow
	}
	if cfg.APIKeyCacheTTL == 0 {
		cfg.APIKeyCacheTTL = def.APIKeyCacheTTL
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if log == nil {
		log = slog.Default()
	}
	ti, err := NewTokenIssuer(cfg.SigningKey, cfg.AccessTTL, cfg.Now)
	if err != nil {
		return nil, err
	}
	dummy, err := HashPassword("heteroflow-timing-equaliser", cfg.Argon2)
	if err != nil {
		return nil, err
	}
	s := &Service{
		store: store, cfg: cfg, tokens: ti, log: log, dummyHash: dummy,
		limiter:  NewRateLimiter(cfg.LoginLimit, cfg.LoginWindow, cfg.Now),
		ipFails:  newIPBackoff(cfg.Lockout.IPFreeFailures, cfg.Lockout.IPMaxBackoff, cfg.Now),
		trusted:  newTrustedIPs(30*24*time.Hour, cfg.Now),
		keys:     newKeyCache(cfg.APIKeyCacheTTL, cfg.Now),
		accounts: newAccountCache(cfg.Now),
		echoes:   map[int64]chan struct{}{},
	}
	// Several servers on one store: revocations and user changes made on
	// any of them reach every server's key cache at once.
	if feed, ok := store.(controlplane.AuthChangeFeed); ok {
		s.feed = feed
		s.keys.live = feed.AuthChangesLive
		feed.SubscribeAuthChanges(s.onAuthChange)
	}
	return s, nil
}

// Tokens exposes the access-token issuer (tests, the agent API).
func (s *Service) Tokens() *TokenIssuer { return s.tokens }

// Policy is the password policy in force.
func (s *Service) Policy() PasswordPolicy { return s.cfg.Policy }

// NewPasswordHash checks password against the policy and hashes it.
func (s *Service) NewPasswordHash(password, username string) (string, error) {
	if err := s.cfg.Policy.Check(password, username); err != nil {
		return "", err
	}
	return HashPassword(password, s.cfg.Argon2)
}

// Login verifies a username and password from ip. Errors: ErrRateLimited
// (too many attempts or failures from ip), ErrUnauthenticated (one message
// for unknown user, wrong password and locked account), ErrForbidden
// (pending or disabled account, told only to who knows the password).
func (s *Service) Login(ctx context.Context, username, password, ip string) (*Session, error) {
	if ok, retry := s.limiter.Allow(ip); !ok {
		return nil, &RateLimitError{RetryAfter: retry}
	}
	if retry := s.ipFails.wait(ip); retry > 0 {
		return nil, &RateLimitError{RetryAfter: retry}
	}
	u, err := s.store.GetUserByName(ctx, username)
	if s.cfg.Directory != nil && (errors.Is(err, controlplane.ErrNotFound) || err == nil && u.AuthSource == controlplane.AuthSourceLDAP) {
		return s.directoryLogin(ctx, u, username, password, ip)
	}
	if err == nil && u.External() {
		// An account of a directory or provider has no local password:
		// this path never opens it, and answers as for a wrong password.
		_, _ = VerifyPassword(s.dummyHash, password)
		s.ipFails.fail(ip)
		return nil, errBadLogin
	}
	if errors.Is(err, controlplane.ErrNotFound) {
		_, _ = VerifyPassword(s.dummyHash, password)
		s.ipFails.fail(ip)
		return nil, errBadLogin
	}
	if err != nil {
		return nil, fmt.Errorf("load user: %w", err)
	}
	now := s.cfg.Now()
	// The password is checked even when locked, so a lock costs the same
	// time as a wrong password and tells nothing.
	ok, err := VerifyPassword(u.PasswordHash, password)
	if err != nil {
		return nil, fmt.Errorf("verify password of %s: %w", u.Username, err)
	}
	if !ok {
		s.ipFails.fail(ip)
		if _, err := s.store.RecordLoginFailure(ctx, u.ID, s.cfg.Lockout.MaxFailures, s.cfg.Lockout.lockFor); err != nil {
			return nil, fmt.Errorf("record failed login: %w", err)
		}
		return nil, errBadLogin
	}
	if u.LockedUntil != nil && now.Before(*u.LockedUntil) && !s.trusted.has(u.ID, ip) {
		return nil, errBadLogin
	}
	switch u.Status {
	case controlplane.UserActive:
	case controlplane.UserPending:
		return nil, fmt.Errorf("%w: account is waiting for administrator approval", controlplane.ErrForbidden)
	default:
		return nil, fmt.Errorf("%w: account is disabled", controlplane.ErrForbidden)
	}
	s.ipFails.reset(ip)
	s.trusted.add(u.ID, ip)
	if u.FailedLogins != 0 || u.LockedUntil != nil || u.Lockouts != 0 {
		if u, err = s.Unlock(ctx, u.ID); err != nil {
			return nil, fmt.Errorf("reset failed logins: %w", err)
		}
	}
	return s.startSession(ctx, u, "")
}

// Unlock clears a user's failed-login count, lock and lockout history.
func (s *Service) Unlock(ctx context.Context, userID int64) (*controlplane.User, error) {
	return Unlock(ctx, s.store, userID)
}

// Unlock clears a user's failed-login count, lock and lockout history in
// store (the CLI on the server machine calls it without a Service).
func Unlock(ctx context.Context, store controlplane.Store, userID int64) (*controlplane.User, error) {
	zero := 0
	var none *time.Time
	return store.UpdateUser(ctx, userID, controlplane.UserUpdate{FailedLogins: &zero, LockedUntil: &none, Lockouts: &zero})
}

// startSession issues an access token and a refresh token; family "" starts a new chain.
func (s *Service) startSession(ctx context.Context, u *controlplane.User, family string) (*Session, error) {
	access, exp, err := s.tokens.Issue(u)
	if err != nil {
		return nil, err
	}
	rt, hash, err := NewRefreshToken()
	if err != nil {
		return nil, err
	}
	if family == "" {
		if family, err = randomToken(16); err != nil {
			return nil, err
		}
	}
	now := s.cfg.Now()
	t := &controlplane.RefreshToken{UserID: u.ID, Family: family, TokenHash: hash, ExpiresAt: now.Add(s.cfg.RefreshTTL), CreatedAt: now}
	if err := s.store.CreateRefreshToken(ctx, t); err != nil {
		return nil, fmt.Errorf("store refresh token: %w", err)
	}
	return &Session{AccessToken: access, RefreshToken: rt, ExpiresAt: exp, User: u}, nil
}
