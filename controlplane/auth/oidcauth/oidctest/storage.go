package oidctest

import (
	"context"
	"crypto/rsa"
	"errors"
	"fmt"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// storage is the provider's whole state, in memory: one client, a few
// users, pending authorization requests and their codes.
type storage struct {
	mu       sync.Mutex
	key      *rsa.PrivateKey
	client   *client
	users    map[string]*User // by username
	requests map[string]*authRequest
	codes    map[string]string // code → request id
	seq      int
	now      func() time.Time
	// knobs of a misbehaving provider (Provider's setters)
	nonceOverride string
	codeTTL       time.Duration
}

var errNotFound = errors.New("not found")

type authRequest struct {
	id        string
	req       oidc.AuthRequest
	subject   string
	done      bool
	authTime  time.Time
	codeAt    time.Time
	nonceOver string
}

func (a *authRequest) GetID() string         { return a.id }
func (a *authRequest) GetACR() string        { return "" }
func (a *authRequest) GetAMR() []string      { return []string{"pwd"} }
func (a *authRequest) GetAudience() []string { return []string{a.req.ClientID} }
func (a *authRequest) GetAuthTime() time.Time {
	return a.authTime
}
func (a *authRequest) GetClientID() string { return a.req.ClientID }
func (a *authRequest) GetCodeChallenge() *oidc.CodeChallenge {
	if a.req.CodeChallenge == "" {
		return nil
	}
	return &oidc.CodeChallenge{Challenge: a.req.CodeChallenge, Method: a.req.CodeChallengeMethod}
}
func (a *authRequest) GetNonce() string {
	if a.nonceOver != "" {
		return a.nonceOver
	}
	return a.req.Nonce
}
func (a *authRequest) GetRedirectURI() string             { return a.req.RedirectURI }
func (a *authRequest) GetResponseType() oidc.ResponseType { return a.req.ResponseType }
func (a *authRequest) GetResponseMode() oidc.ResponseMode { return a.req.ResponseMode }
func (a *authRequest) GetScopes() []string                { return a.req.Scopes }
func (a *authRequest) GetState() string                   { return a.req.State }
func (a *authRequest) GetSubject() string                 { return a.subject }
func (a *authRequest) Done() bool                         { return a.done }
func (a *authRequest) SetCurrentScopes(scopes []string)   { a.req.Scopes = scopes }

func (s *storage) CreateAuthRequest(_ context.Context, req *oidc.AuthRequest, _ string) (op.AuthRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	a := &authRequest{id: fmt.Sprintf("req-%d", s.seq), req: *req, nonceOver: s.nonceOverride}
	s.requests[a.id] = a
	return a, nil
}

func (s *storage) AuthRequestByID(_ context.Context, id string) (op.AuthRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.requests[id]
	if !ok {
		return nil, fmt.Errorf("auth request %s: %w", id, errNotFound)
	}
	return a, nil
}

func (s *storage) AuthRequestByCode(_ context.Context, code string) (op.AuthRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.requests[s.codes[code]]
	if !ok {
		return nil, errors.New("code unknown or already used")
	}
	if s.now().Sub(a.codeAt) > s.codeTTL {
		return nil, errors.New("code expired")
	}
	return a, nil
}

func (s *storage) SaveAuthCode(_ context.Context, id, code string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.codes[code] = id
	if a, ok := s.requests[id]; ok {
		a.codeAt = s.now()
	}
	return nil
}

func (s *storage) DeleteAuthRequest(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.requests, id)
	for c, rid := range s.codes {
		if rid == id {
			delete(s.codes, c)
		}
	}
	return nil
}

// finish marks request id signed in by username (the login form).
func (s *storage) finish(id, username, password string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, ok := s.users[username]
	if !ok || u.Password != password {
		return errors.New("wrong username or password")
	}
	a, ok := s.requests[id]
	if !ok {
		return errors.New("unknown request")
	}
	a.subject, a.done, a.authTime = u.Subject, true, s.now()
	return nil
}

func (s *storage) userBySubject(sub string) *User {
	for _, u := range s.users {
		if u.Subject == sub {
			return u
		}
	}
	return nil
}

func (s *storage) CreateAccessToken(context.Context, op.TokenRequest) (string, time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	return fmt.Sprintf("at-%d", s.seq), s.now().Add(5 * time.Minute), nil
}

func (s *storage) CreateAccessAndRefreshTokens(context.Context, op.TokenRequest, string) (string, string, time.Time, error) {
	return "", "", time.Time{}, errors.New("refresh tokens are not offered")
}

func (s *storage) TokenRequestByRefreshToken(context.Context, string) (op.RefreshTokenRequest, error) {
	return nil, op.ErrInvalidRefreshToken
}

func (s *storage) TerminateSession(context.Context, string, string) error { return nil }

func (s *storage) RevokeToken(context.Context, string, string, string) *oidc.Error { return nil }

func (s *storage) GetRefreshTokenInfo(context.Context, string, string) (string, string, error) {
	return "", "", op.ErrInvalidRefreshToken
}

type signingKey struct{ k *rsa.PrivateKey }

func (k signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k signingKey) Key() any                                    { return k.k }
func (k signingKey) ID() string                                  { return "test-key" }

type publicKey struct{ k *rsa.PrivateKey }

func (k publicKey) ID() string                         { return "test-key" }
func (k publicKey) Algorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k publicKey) Use() string                        { return "sig" }
func (k publicKey) Key() any                           { return &k.k.PublicKey }

func (s *storage) SigningKey(context.Context) (op.SigningKey, error) { return signingKey{s.key}, nil }
func (s *storage) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.RS256}, nil
}
func (s *storage) KeySet(context.Context) ([]op.Key, error) { return []op.Key{publicKey{s.key}}, nil }

func (s *storage) GetClientByClientID(_ context.Context, id string) (op.Client, error) {
	if id != s.client.id {
		return nil, fmt.Errorf("client %s: %w", id, errNotFound)
	}
	return s.client, nil
}

func (s *storage) AuthorizeClientIDSecret(_ context.Context, id, secret string) error {
	if id != s.client.id || secret != s.client.secret {
		return errors.New("wrong client credentials")
	}
	return nil
}

// SetUserinfoFromScopes fills the ID token's claims: profile, email and
// the groups claim.
func (s *storage) SetUserinfoFromScopes(_ context.Context, info *oidc.UserInfo, sub, _ string, scopes []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.userBySubject(sub)
	if u == nil {
		return fmt.Errorf("user %s: %w", sub, errNotFound)
	}
	info.Subject = u.Subject
	for _, sc := range scopes {
		switch sc {
		case oidc.ScopeProfile:
			info.PreferredUsername, info.Name = u.Username, u.Name
		case oidc.ScopeEmail:
			info.Email, info.EmailVerified = u.Email, true
		case "groups":
			info.AppendClaims("groups", u.Groups)
		}
	}
	return nil
}

func (s *storage) SetUserinfoFromToken(ctx context.Context, info *oidc.UserInfo, _, sub, _ string) error {
	return s.SetUserinfoFromScopes(ctx, info, sub, "", []string{oidc.ScopeProfile, oidc.ScopeEmail, "groups"})
}

func (s *storage) SetIntrospectionFromToken(context.Context, *oidc.IntrospectionResponse, string, string, string) error {
	return errors.New("introspection is not offered")
}

func (s *storage) GetPrivateClaimsFromScopes(context.Context, string, string, []string) (map[string]any, error) {
	return nil, nil
}

func (s *storage) GetKeyByIDAndClientID(context.Context, string, string) (*jose.JSONWebKey, error) {
	return nil, errors.New("JWT profile is not offered")
}

func (s *storage) ValidateJWTProfileScopes(context.Context, string, []string) ([]string, error) {
	return nil, errors.New("JWT profile is not offered")
}

func (s *storage) Health(context.Context) error { return nil }

// client is the one registered relying party: a confidential web client.
type client struct {
	id, secret   string
	redirectURIs []string
	postLogout   []string
	// globs accept callbacks on any port of a test server started after
	// the provider (path.Match patterns).
	redirectGlobs, postLogoutGlobs []string
	loginURL                       func(id string) string
}

func (c *client) RedirectURIGlobs() []string           { return c.redirectGlobs }
func (c *client) PostLogoutRedirectURIGlobs() []string { return c.postLogoutGlobs }

func (c *client) GetID() string                       { return c.id }
func (c *client) RedirectURIs() []string              { return c.redirectURIs }
func (c *client) PostLogoutRedirectURIs() []string    { return c.postLogout }
func (c *client) ApplicationType() op.ApplicationType { return op.ApplicationTypeWeb }
func (c *client) AuthMethod() oidc.AuthMethod         { return oidc.AuthMethodBasic }
func (c *client) ResponseTypes() []oidc.ResponseType {
	return []oidc.ResponseType{oidc.ResponseTypeCode}
}
func (c *client) GrantTypes() []oidc.GrantType        { return []oidc.GrantType{oidc.GrantTypeCode} }
func (c *client) LoginURL(id string) string           { return c.loginURL(id) }
func (c *client) AccessTokenType() op.AccessTokenType { return op.AccessTokenTypeBearer }
func (c *client) IDTokenLifetime() time.Duration      { return 5 * time.Minute }
func (c *client) DevMode() bool                       { return true }
func (c *client) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c *client) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c *client) IsScopeAllowed(scope string) bool     { return scope == "groups" }
func (c *client) IDTokenUserinfoClaimsAssertion() bool { return true }
func (c *client) ClockSkew() time.Duration             { return 0 }
