package oidcauth

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/auth"
)

// Stable codes of refused OIDC sign-ins (the console translates them).
const (
	CodeUnknownProvider = "oidc_unknown_provider"
	CodeUnavailable     = "oidc_provider_unavailable"
	CodeBadState        = "oidc_bad_state"
	CodeBadToken        = "oidc_bad_token"
	CodeExchangeFailed  = "oidc_exchange_failed"
	CodeDenied          = "oidc_denied"
	CodeNoSession       = "oidc_no_session"
)

// flowTTL bounds how long a user may take at the provider.
const flowTTL = 10 * time.Minute

// handoffTTL bounds how long a finished sign-in waits for the console.
const handoffTTL = 2 * time.Minute

// Options are the RP's dependencies.
type Options struct {
	Providers  []ProviderConfig // secrets loaded
	SigningKey []byte           // the server's JWT key (cookie keys derive from it)
	Auth       *auth.Service
	Logger     *slog.Logger
	// HTTPClient talks to the providers (default: 10 s timeout).
	HTTPClient *http.Client
	Now        func() time.Time
}

// RP is the relying party for every configured provider.
type RP struct {
	opts      Options
	seal      *sealer
	providers map[string]*provider
	order     []string
}

type provider struct {
	cfg ProviderConfig
	mu  sync.Mutex
	// discovered lazily and kept: a provider down at start does not stop
	// the server, and its sign-in fails closed until it answers.
	oidc       *oidc.Provider
	endSession string
}

// Info is what the console's login page shows for a provider.
type Info struct {
	Name        string
	DisplayName string
}

// New builds the RP; it contacts no provider yet.
func New(o Options) (*RP, error) {
	if err := ValidateAll(o.Providers); err != nil {
		return nil, err
	}
	if o.Auth == nil {
		return nil, errors.New("oidc: Auth is required")
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	s, err := newSealer(o.SigningKey)
	if err != nil {
		return nil, err
	}
	rp := &RP{opts: o, seal: s, providers: map[string]*provider{}}
	for _, p := range o.Providers {
		rp.providers[p.Name] = &provider{cfg: p.withDefaults()}
		rp.order = append(rp.order, p.Name)
	}
	return rp, nil
}

// Providers lists the configured providers in configuration order.
func (rp *RP) Providers() []Info {
	out := make([]Info, 0, len(rp.order))
	for _, n := range rp.order {
		out = append(out, Info{Name: n, DisplayName: rp.providers[n].cfg.DisplayName})
	}
	return out
}

func (rp *RP) provider(name string) (*provider, error) {
	p, ok := rp.providers[name]
	if !ok {
		return nil, controlplane.Coded(controlplane.ErrNotFound, CodeUnknownProvider, []string{"provider", name},
			"no sign-in provider %q is configured", name)
	}
	return p, nil
}

func (rp *RP) ctx(ctx context.Context) context.Context {
	return oidc.ClientContext(ctx, rp.opts.HTTPClient)
}

// discover reads (once) the provider's discovery document.
func (rp *RP) discover(ctx context.Context, p *provider) (*oidc.Provider, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.oidc != nil {
		return p.oidc, nil
	}
	op, err := oidc.NewProvider(rp.ctx(ctx), p.cfg.Issuer)
	if err != nil {
		rp.opts.Logger.Error("OpenID provider discovery failed; its sign-in is refused", "provider", p.cfg.Name, "issuer", p.cfg.Issuer, "err", err)
		return nil, controlplane.Coded(controlplane.ErrUnavailable, CodeUnavailable, []string{"provider", p.cfg.Name},
			"the identity provider %s cannot be reached; sign-in through it is refused until it answers", p.cfg.DisplayName)
	}
	var extra struct {
		EndSession string `json:"end_session_endpoint"`
	}
	_ = op.Claims(&extra)
	p.oidc, p.endSession = op, extra.EndSession
	return op, nil
}

func (p *provider) oauth(op *oidc.Provider, redirectURL string) *oauth2.Config {
	if p.cfg.RedirectURL != "" {
		redirectURL = p.cfg.RedirectURL
	}
	return &oauth2.Config{ClientID: p.cfg.ClientID, ClientSecret: p.cfg.ClientSecret, Endpoint: op.Endpoint(),
		RedirectURL: redirectURL, Scopes: p.cfg.Scopes}
}

// flow is what the flow cookie carries between start and callback.
type flow struct {
	Provider string `json:"p"`
	State    string `json:"s"`
	Nonce    string `json:"n"`
	Verifier string `json:"v"`
	Return   string `json:"r"`
	Expires  int64  `json:"e"`
}

func randomString() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// SafeReturn keeps only a path of this site (no scheme, no host, no
// "//"), so a sign-in never redirects elsewhere. Any control character
// refuses the path: browsers drop tabs and newlines from a URL before
// parsing it, so "/\t/evil.example" would land on //evil.example.
func SafeReturn(p string) string {
	if p == "" || !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.HasPrefix(p, "/\\") ||
		strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return "/"
	}
	return p
}

// Start begins a sign-in at provider name: it answers the provider's
// authorization URL and the sealed flow cookie's value.
func (rp *RP) Start(ctx context.Context, name, redirectURL, returnTo string) (authURL, cookie string, err error) {
	p, err := rp.provider(name)
	if err != nil {
		return "", "", err
	}
	op, err := rp.discover(ctx, p)
	if err != nil {
		return "", "", err
	}
	f := flow{Provider: name, Verifier: oauth2.GenerateVerifier(), Return: SafeReturn(returnTo), Expires: rp.opts.Now().Add(flowTTL).Unix()}
	if f.State, err = randomString(); err != nil {
		return "", "", err
	}
	if f.Nonce, err = randomString(); err != nil {
		return "", "", err
	}
	if cookie, err = rp.seal.seal("flow", f); err != nil {
		return "", "", err
	}
	authURL = p.oauth(op, redirectURL).AuthCodeURL(f.State, oidc.Nonce(f.Nonce), oauth2.S256ChallengeOption(f.Verifier))
	return authURL, cookie, nil
}

// CallbackResult is a finished sign-in.
type CallbackResult struct {
	Session *auth.Session
	Return  string
	// Handoff is the sealed one-use cookie value the console redeems.
	Handoff string
}

func refused(code, format string, a ...any) error {
	return controlplane.Coded(controlplane.ErrUnauthenticated, code, nil, format, a...)
}

// Callback finishes a sign-in: q is the callback's query, cookie the flow
// cookie. Every check fails closed with a coded error; the username is
// returned (when known) for the audit log even on failure.
func (rp *RP) Callback(ctx context.Context, name, redirectURL, cookie string, q url.Values) (*CallbackResult, string, error) {
	p, err := rp.provider(name)
	if err != nil {
		return nil, "", err
	}
	var f flow
	if cookie == "" || rp.seal.open("flow", cookie, &f) != nil || f.Provider != name || rp.opts.Now().Unix() > f.Expires {
		return nil, "", refused(CodeBadState, "the sign-in does not match this browser or has expired; start again")
	}
	if q.Get("state") == "" || q.Get("state") != f.State {
		return nil, "", refused(CodeBadState, "the sign-in's state does not match this browser's; start again")
	}
	if e := q.Get("error"); e != "" {
		reason := e
		if d := q.Get("error_description"); d != "" {
			reason += ": " + d
		}
		if len(reason) > 200 {
			reason = reason[:200]
		}
		return nil, "", controlplane.Coded(controlplane.ErrUnauthenticated, CodeDenied, []string{"reason", reason},
			"the identity provider did not sign you in (%s)", reason)
	}
	op, err := rp.discover(ctx, p)
	if err != nil {
		return nil, "", err
	}
	tok, err := p.oauth(op, redirectURL).Exchange(rp.ctx(ctx), q.Get("code"), oauth2.VerifierOption(f.Verifier))
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			rp.opts.Logger.Warn("OpenID provider refused the code", "provider", name, "err", re.ErrorCode)
			return nil, "", refused(CodeExchangeFailed, "the identity provider refused the sign-in code (expired or already used); start again")
		}
		rp.opts.Logger.Error("OpenID token exchange failed", "provider", name, "err", err)
		return nil, "", controlplane.Coded(controlplane.ErrUnavailable, CodeUnavailable, []string{"provider", name},
			"the identity provider %s cannot be reached; sign-in through it is refused until it answers", p.cfg.DisplayName)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return nil, "", refused(CodeBadToken, "the identity provider returned no ID token")
	}
	idt, err := op.Verifier(&oidc.Config{ClientID: p.cfg.ClientID, Now: rp.opts.Now}).Verify(rp.ctx(ctx), raw)
	if err != nil {
		rp.opts.Logger.Warn("ID token refused", "provider", name, "err", err)
		return nil, "", refused(CodeBadToken, "the identity provider's ID token does not verify (issuer, audience, signature or expiry)")
	}
	if idt.Nonce != f.Nonce {
		rp.opts.Logger.Warn("ID token nonce does not match the flow; refusing (replay?)", "provider", name)
		return nil, "", refused(CodeBadToken, "the ID token was not issued for this sign-in (nonce)")
	}
	id, err := p.identity(idt)
	if err != nil {
		return nil, "", err
	}
	sess, err := rp.opts.Auth.ExternalLogin(ctx, id, p.cfg.Mapping)
	if err != nil {
		return nil, id.Username, err
	}
	handoff, err := rp.seal.seal("handoff", handoffToken{Refresh: sess.RefreshToken, Expires: rp.opts.Now().Add(handoffTTL).Unix()})
	if err != nil {
		return nil, id.Username, err
	}
	return &CallbackResult{Session: sess, Return: f.Return, Handoff: handoff}, id.Username, nil
}

// identity maps the ID token's claims.
func (p *provider) identity(idt *oidc.IDToken) (*auth.ExternalIdentity, error) {
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		return nil, refused(CodeBadToken, "the ID token's claims do not parse")
	}
	str := func(k string) string { s, _ := claims[k].(string); return s }
	id := &auth.ExternalIdentity{Source: controlplane.AuthSourceOIDCPrefix + p.cfg.Name, ExternalID: idt.Subject,
		Username: str(p.cfg.UsernameClaim), DisplayName: str("name"), Email: str("email")}
	switch g := claims[p.cfg.GroupsClaim].(type) {
	case string:
		id.Groups = []string{g}
	case []any:
		for _, v := range g {
			if s, ok := v.(string); ok {
				id.Groups = append(id.Groups, s)
			}
		}
	}
	if id.Username == "" || len(id.Username) > 64 {
		return nil, refused(CodeBadToken, "the ID token has no usable %s claim to name the account", p.cfg.UsernameClaim)
	}
	return id, nil
}

type handoffToken struct {
	Refresh string `json:"t"`
	Expires int64  `json:"e"`
}

// Redeem exchanges the handoff cookie for the session's tokens. The
// refresh token inside is rotated, so a second redemption of the same
// cookie is a reuse and revokes the session.
func (rp *RP) Redeem(ctx context.Context, cookie string) (*auth.Session, error) {
	var h handoffToken
	if cookie == "" || rp.seal.open("handoff", cookie, &h) != nil || rp.opts.Now().Unix() > h.Expires {
		// Bad input rather than a refused credential: the request carries no sign-in to redeem.
		return nil, controlplane.Coded(controlplane.ErrInvalid, CodeNoSession, nil, "no finished sign-in is waiting for this browser; start again")
	}
	return rp.opts.Auth.Refresh(ctx, h.Refresh)
}

// EndSessionURL is the provider's RP-initiated logout URL for an account
// of source "oidc:<name>" ("" when the provider advertises none).
func (rp *RP) EndSessionURL(ctx context.Context, source, postLogout string) string {
	name, ok := strings.CutPrefix(source, controlplane.AuthSourceOIDCPrefix)
	if !ok {
		return ""
	}
	p, err := rp.provider(name)
	if err != nil {
		return ""
	}
	if _, err := rp.discover(ctx, p); err != nil || p.endSession == "" {
		return ""
	}
	u, err := url.Parse(p.endSession)
	if err != nil {
		return ""
	}
	q := u.Query()
	q.Set("client_id", p.cfg.ClientID)
	if p.cfg.PostLogoutRedirectURL != "" {
		postLogout = p.cfg.PostLogoutRedirectURL
	}
	if postLogout != "" {
		q.Set("post_logout_redirect_uri", postLogout)
	}
	u.RawQuery = q.Encode()
	return u.String()
}
