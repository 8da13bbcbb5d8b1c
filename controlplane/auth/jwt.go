package auth

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/heteroflow/heteroflow/controlplane"
)

// AccessClaims are the claims of an access token. The role is embedded so
// that authorising a request needs no store round trip; the short TTL bounds
// how long a demoted user keeps the old role.
type AccessClaims struct {
	Username string            `json:"name"`
	Role     controlplane.Role `json:"role"`
	Tenant   string            `json:"tenant,omitempty"`
	jwt.RegisteredClaims
}

// TokenIssuer signs and verifies HS256 access tokens.
type TokenIssuer struct {
	key      []byte
	ttl      time.Duration
	issuer   string
	now      func() time.Time
	verified verifiedTokens
}

// verifiedTokens remembers the claims of tokens that passed Verify, until
// they expire: a client sends the same token with every request, and
// decoding and HMAC-checking it again was a few percent of the server's
// CPU at thousands of requests a second. Keyed by the whole token, its
// signature included, so only a byte-identical copy of a token verified
// here hits. An access token cannot be revoked (its short TTL bounds it;
// a disabled or deleted account is refused per request, see
// auth.Service.Account), so remembering it changes no answer.
type verifiedTokens struct {
	mu sync.Mutex
	m  map[string]*AccessClaims
}

// maxVerifiedTokens bounds the memory: when full, the map starts over.
const maxVerifiedTokens = 4096

func (v *verifiedTokens) get(token string, now time.Time) (*AccessClaims, bool) {
	v.mu.Lock()
	c, ok := v.m[token]
	v.mu.Unlock()
	if !ok || !now.Before(c.ExpiresAt.Time) || c.NotBefore != nil && now.Before(c.NotBefore.Time) {
		return nil, false
	}
	cp := *c
	return &cp, true
}

func (v *verifiedTokens) put(token string, c *AccessClaims) {
	cp := *c
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.m == nil || len(v.m) >= maxVerifiedTokens {
		v.m = make(map[string]*AccessClaims)
	}
	v.m[token] = &cp
}

const jwtIssuer = "heteroflow"

// NewTokenIssuer needs a key of at least 32 bytes (HS256 wants ≥ 256 bits).
func NewTokenIssuer(key []byte, ttl time.Duration, now func() time.Time) (*TokenIssuer, error) {
	if len(key) < 32 {
		return nil, fmt.Errorf("jwt signing key must be at least 32 bytes, got %d", len(key))
	}
	if ttl <= 0 {
		return nil, fmt.Errorf("access token ttl must be positive, got %s", ttl)
	}
	if now == nil {
		now = time.Now
	}
	return &TokenIssuer{key: key, ttl: ttl, issuer: jwtIssuer, now: now}, nil
}

// TTL is the access-token lifetime.
func (ti *TokenIssuer) TTL() time.Duration { return ti.ttl }

// Issue returns a signed token for u and its expiry.
func (ti *TokenIssuer) Issue(u *controlplane.User) (string, time.Time, error) {
	now := ti.now()
	exp := now.Add(ti.ttl)
	claims := AccessClaims{
		Username: u.Username,
		Role:     u.Role,
		Tenant:   u.Tenant,
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    ti.issuer,
			Subject:   strconv.FormatInt(u.ID, 10),
			IssuedAt:  jwt.NewNumericDate(now),
			NotBefore: jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(exp),
		},
	}
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(ti.key)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("sign access token: %w", err)
	}
	return s, exp, nil
}

// ErrTokenExpired distinguishes an expired token (the client should refresh)
// from a bad one; both wrap ErrUnauthenticated.
var ErrTokenExpired = fmt.Errorf("%w: access token expired", controlplane.ErrUnauthenticated)

// Verify parses and validates a token: signature, algorithm, issuer, expiry.
func (ti *TokenIssuer) Verify(token string) (*AccessClaims, error) {
	if c, ok := ti.verified.get(token, ti.now()); ok {
		return c, nil
	}
	var c AccessClaims
	_, err := jwt.ParseWithClaims(token, &c, func(*jwt.Token) (any, error) { return ti.key, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithIssuer(ti.issuer),
		jwt.WithExpirationRequired(),
		jwt.WithTimeFunc(ti.now),
	)
	if err != nil {
		if errors.Is(err, jwt.ErrTokenExpired) {
			return nil, ErrTokenExpired
		}
		return nil, fmt.Errorf("%w: invalid access token", controlplane.ErrUnauthenticated)
	}
	if !c.Role.Valid() {
		return nil, fmt.Errorf("%w: token carries unknown role", controlplane.ErrUnauthenticated)
	}
	ti.verified.put(token, &c)
	return &c, nil
}

// UserID returns the subject as a user id.
func (c *AccessClaims) UserID() (int64, error) {
	id, err := strconv.ParseInt(c.Subject, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: bad subject", controlplane.ErrUnauthenticated)
	}
	return id, nil
}
