package httpapi

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/auth/oidcauth"
)

// OpenID Connect single sign-on (controlplane/auth/oidcauth). The routes
// exist with no provider configured too: the list is then empty and the
// rest answer as for an unknown provider.

const (
	oidcPath          = Prefix + "/auth/oidc"
	oidcFlowCookie    = "hf_oidc_flow"
	oidcSessionCookie = "hf_oidc_session"
)

// OIDCProviderJSON is one "Sign in with …" button of the login page.
type OIDCProviderJSON struct {
	Name        string `json:"name" doc:"Key of the provider in URLs and in accounts' auth_source (oidc:<name>)"`
	DisplayName string `json:"display_name" doc:"Label of the console's sign-in button"`
	StartURL    string `json:"start_url" doc:"Where the browser goes to start signing in"`
}

type oidcProvidersOut struct {
	Body struct {
		Providers []OIDCProviderJSON `json:"providers"`
	}
}

// oidcOrigin captures the scheme and host the browser used, for the
// default callback URL.
type oidcOrigin struct{ origin string }

func (o *oidcOrigin) Resolve(ctx huma.Context) []error {
	scheme := "http"
	if ctx.TLS() != nil {
		scheme = "https"
	}
	o.origin = scheme + "://" + ctx.Host()
	return nil
}

type oidcStartIn struct {
	oidcOrigin
	Provider string `path:"provider" maxLength:"32"`
	ReturnTo string `query:"return_to" maxLength:"2048" doc:"Console path to land on after signing in"`
	Accept   string `header:"Accept"`
}

type oidcCallbackIn struct {
	oidcOrigin
	Provider         string `path:"provider" maxLength:"32"`
	Code             string `query:"code" maxLength:"4096"`
	State            string `query:"state" maxLength:"512"`
	Error            string `query:"error" maxLength:"256"`
	ErrorDescription string `query:"error_description" maxLength:"1024"`
	Flow             string `cookie:"hf_oidc_flow"`
	Accept           string `header:"Accept"`
}

type redirectOut struct {
	Status       int
	Location     string        `header:"Location"`
	SetCookie    []http.Cookie `header:"Set-Cookie"`
	CacheControl string        `header:"Cache-Control"`
}

type oidcSessionIn struct {
	Handoff string `cookie:"hf_oidc_session"`
}

type oidcSessionOut struct {
	SetCookie http.Cookie `header:"Set-Cookie"`
	Body      SessionJSON
}

type oidcLogoutIn struct {
	oidcOrigin
	Body struct {
		RefreshToken string `json:"refresh_token" minLength:"1" maxLength:"512"`
	}
}

type oidcLogoutOut struct {
	Body struct {
		EndSessionURL string `json:"end_session_url,omitempty" doc:"The provider's logout page to send the browser to (RP-initiated logout); absent when the account is not from a provider that offers one"`
	}
}

func (a *API) registerOIDC() {
	Register(a, huma.Operation{OperationID: "oidc-providers", Method: http.MethodGet, Path: oidcPath + "/providers",
		Summary: "OpenID providers configured for single sign-on (the login page's buttons)", Tags: []string{"auth"}},
		Public, a.oidcProviders)
	Register(a, huma.Operation{OperationID: "oidc-start", Method: http.MethodGet, Path: oidcPath + "/{provider}/start",
		Summary: "Start signing in at an OpenID provider (302 to the provider; with Accept: application/json errors are JSON, else a redirect to /login?sso_error=<code>)",
		Tags:    []string{"auth"}, DefaultStatus: http.StatusFound, Errors: []int{404, 503}},
		Public, a.oidcStart)
	Register(a, huma.Operation{OperationID: "oidc-callback", Method: http.MethodGet, Path: oidcPath + "/{provider}/callback",
		Summary: "The provider's redirect back: checks state, PKCE, the ID token and its nonce, signs the user in and hands the session to the console (302 to /login/sso)",
		Tags:    []string{"auth"}, DefaultStatus: http.StatusFound, Errors: []int{404, 503}},
		Public, a.oidcCallback)
	Register(a, huma.Operation{OperationID: "oidc-session", Metadata: Audited("auth.oidc.session"), Method: http.MethodPost, Path: oidcPath + "/session",
		Summary: "Redeem the finished single sign-on of this browser (one-use cookie) for a session", Tags: []string{"auth"}},
		Public, a.oidcSession)
	Register(a, huma.Operation{OperationID: "oidc-logout", Metadata: Audited("auth.logout"), Method: http.MethodPost, Path: oidcPath + "/logout",
		Summary: "Log out (revoke the refresh token's session) and get the provider's logout URL for RP-initiated logout", Tags: []string{"auth"}},
		Authenticated, a.oidcLogout)
}

func (a *API) oidcProviders(context.Context, *struct{}) (*oidcProvidersOut, error) {
	out := &oidcProvidersOut{}
	out.Body.Providers = []OIDCProviderJSON{}
	if a.opts.OIDC == nil {
		return out, nil
	}
	for _, p := range a.opts.OIDC.Providers() {
		out.Body.Providers = append(out.Body.Providers, OIDCProviderJSON{Name: p.Name, DisplayName: p.DisplayName,
			StartURL: oidcPath + "/" + url.PathEscape(p.Name) + "/start"})
	}
	return out, nil
}

func (a *API) oidcRP() (*oidcauth.RP, error) {
	if a.opts.OIDC == nil {
		return nil, controlplane.Coded(controlplane.ErrNotFound, oidcauth.CodeUnknownProvider, nil, "no sign-in provider is configured")
	}
	return a.opts.OIDC, nil
}

func callbackURL(origin, provider string) string {
	return origin + oidcPath + "/" + url.PathEscape(provider) + "/callback"
}

func oidcCookie(name, value, path string, maxAge int, secure bool) http.Cookie {
	return http.Cookie{Name: name, Value: value, Path: path, MaxAge: maxAge, HttpOnly: true, Secure: secure, SameSite: http.SameSiteLaxMode}
}

func wantsJSON(accept string) bool { return strings.Contains(accept, "application/json") }

// loginError sends a browser back to the login page with the refusal's
// code (and params) for the console to show in its language.
func loginError(err error, clear ...http.Cookie) *redirectOut {
	q := url.Values{}
	var ce *controlplane.CodedError
	if errors.As(err, &ce) {
		q.Set("sso_error", ce.Code)
		for k, v := range ce.Params {
			q.Set("sso_"+k, v)
		}
	} else {
		q.Set("sso_error", "internal")
	}
	return &redirectOut{Status: http.StatusFound, Location: "/login?" + q.Encode(), SetCookie: clear, CacheControl: "no-store"}
}

func (a *API) oidcStart(ctx context.Context, in *oidcStartIn) (*redirectOut, error) {
	rp, err := a.oidcRP()
	var authURL, cookie string
	if err == nil {
		authURL, cookie, err = rp.Start(ctx, in.Provider, callbackURL(in.origin, in.Provider), in.ReturnTo)
	}
	if err != nil {
		if wantsJSON(in.Accept) {
			return nil, err
		}
		return loginError(err), nil
	}
	secure := strings.HasPrefix(in.origin, "https:")
	return &redirectOut{Status: http.StatusFound, Location: authURL, CacheControl: "no-store",
		SetCookie: []http.Cookie{oidcCookie(oidcFlowCookie, cookie, oidcPath+"/", 600, secure)}}, nil
}

func (a *API) oidcCallback(ctx context.Context, in *oidcCallbackIn) (*redirectOut, error) {
	secure := strings.HasPrefix(in.origin, "https:")
	clearFlow := oidcCookie(oidcFlowCookie, "", oidcPath+"/", -1, secure)
	q := url.Values{"code": {in.Code}, "state": {in.State}}
	if in.Error != "" {
		q.Set("error", in.Error)
		q.Set("error_description", in.ErrorDescription)
	}
	rp, err := a.oidcRP()
	var res *oidcauth.CallbackResult
	username := ""
	if err == nil {
		res, username, err = rp.Callback(ctx, in.Provider, callbackURL(in.origin, in.Provider), in.Flow, q)
	}
	a.auditOIDCLogin(ctx, in.Provider, username, res, err)
	if err != nil {
		if wantsJSON(in.Accept) {
			return nil, err
		}
		return loginError(err, clearFlow), nil
	}
	handoff := oidcCookie(oidcSessionCookie, res.Handoff, oidcPath+"/session", 120, secure)
	return &redirectOut{Status: http.StatusFound, Location: "/login/sso?" + url.Values{"return_to": {res.Return}}.Encode(),
		SetCookie: []http.Cookie{clearFlow, handoff}, CacheControl: "no-store"}, nil
}

// auditOIDCLogin records a single sign-on attempt (the callback is a GET,
// which the mutation audit does not see).
func (a *API) auditOIDCLogin(ctx context.Context, provider, username string, res *oidcauth.CallbackResult, err error) {
	e := &controlplane.AuditEntry{At: a.now().UTC(), Actor: username, Module: controlplane.ModuleAuth, Level: controlplane.LevelInfo,
		Action: "auth.login.oidc", Target: "oidc/" + provider, SourceIP: ClientIP(ctx), Result: "ok"}
	if e.Actor == "" {
		e.Actor = "anonymous"
	}
	if res != nil {
		e.Target = "user/" + strconv.FormatInt(res.Session.User.ID, 10)
		e.Detail = "provider " + provider
	}
	if err != nil {
		e.Level, e.Result = controlplane.LevelWarn, "denied: "+toAPIError(a.log, err).Body.Message
	}
	a.auditor.Record(e)
}

func (a *API) oidcSession(ctx context.Context, in *oidcSessionIn) (*oidcSessionOut, error) {
	SetAuditModule(ctx, controlplane.ModuleAuth)
	SetAudit(ctx, "auth.oidc.session", "")
	if a.opts.OIDC == nil {
		return nil, controlplane.Coded(controlplane.ErrInvalid, oidcauth.CodeNoSession, nil, "no finished sign-in is waiting for this browser")
	}
	s, err := a.opts.OIDC.Redeem(ctx, in.Handoff)
	if err != nil {
		return nil, err
	}
	SetAuditActor(ctx, s.User.Username)
	SetAudit(ctx, "auth.oidc.session", "user/"+strconv.FormatInt(s.User.ID, 10))
	out := &oidcSessionOut{Body: a.sessionJSON(s).Body}
	out.SetCookie = oidcCookie(oidcSessionCookie, "", oidcPath+"/session", -1, false)
	return out, nil
}

func (a *API) oidcLogout(ctx context.Context, in *oidcLogoutIn) (*oidcLogoutOut, error) {
	SetAuditModule(ctx, controlplane.ModuleAuth)
	p := PrincipalFrom(ctx)
	SetAudit(ctx, "auth.logout", "user/"+strconv.FormatInt(p.UserID, 10))
	if err := a.auth.Logout(ctx, in.Body.RefreshToken, p.UserID); err != nil {
		return nil, err
	}
	out := &oidcLogoutOut{}
	if a.opts.OIDC != nil && p.APIKeyID == 0 {
		u, err := a.store.GetUser(ctx, p.UserID)
		if err != nil && !errors.Is(err, controlplane.ErrNotFound) {
			return nil, err
		}
		if u != nil {
			out.Body.EndSessionURL = a.opts.OIDC.EndSessionURL(ctx, u.AuthSource, in.origin+"/login")
		}
	}
	return out, nil
}
