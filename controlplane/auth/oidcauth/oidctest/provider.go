// Package oidctest is an OpenID provider for tests (zitadel/oidc's op
// package over an in-memory storage): one confidential client, a few users
// with a plain login form, and switches that make it misbehave (a wrong
// nonce, an ID token from another issuer, codes that expire at once). It is
// test support only; no production code imports it.
package oidctest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zitadel/oidc/v3/pkg/op"
)

// User is a person the provider can sign in.
type User struct {
	Subject  string
	Username string
	Password string
	Name     string
	Email    string
	Groups   []string
}

// Options configure the provider's client and users.
type Options struct {
	ClientID, ClientSecret string
	RedirectURIs           []string
	PostLogoutRedirectURIs []string
	// RedirectURIGlobs and PostLogoutRedirectURIGlobs accept URLs matching
	// a pattern (e.g. http://127.0.0.1:*/api/v1/auth/oidc/*/callback), for a
	// relying party whose port is chosen after the provider starts.
	RedirectURIGlobs, PostLogoutRedirectURIGlobs []string
	Users                                        []User
}

// Provider is a running test OpenID provider.
type Provider struct {
	// URL is the issuer once served (Start sets it).
	URL         string
	st          *storage
	handler     http.Handler
	wrongIssuer atomic.Bool
}

// New builds the provider's handler; the issuer is the scheme and host
// each request arrives on.
func New(o Options) (*Provider, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	p := &Provider{st: &storage{key: key, users: map[string]*User{}, requests: map[string]*authRequest{},
		codes: map[string]string{}, now: time.Now, codeTTL: time.Minute}}
	for i := range o.Users {
		u := o.Users[i]
		p.st.users[u.Username] = &u
	}
	p.st.client = &client{id: o.ClientID, secret: o.ClientSecret, redirectURIs: o.RedirectURIs, postLogout: o.PostLogoutRedirectURIs,
		redirectGlobs: o.RedirectURIGlobs, postLogoutGlobs: o.PostLogoutRedirectURIGlobs,
		loginURL: func(id string) string { return "/login?id=" + id }}
	cfg := &op.Config{CryptoKey: sha256.Sum256([]byte("oidctest")), CodeMethodS256: true, AuthMethodPost: true,
		DefaultLogoutRedirectURI: "/logged-out"}
	prov, err := op.NewProvider(cfg, p.st, op.IssuerFromHost(""), op.WithAllowInsecure())
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	callback := op.AuthCallbackURL(prov)
	mux.Handle("/login", op.NewIssuerInterceptor(prov.IssuerFromRequest).HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			id := r.FormValue("id")
			if err := p.st.finish(id, r.FormValue("username"), r.FormValue("password")); err != nil {
				w.WriteHeader(http.StatusUnauthorized)
				_ = loginPage.Execute(w, map[string]string{"ID": id, "Error": err.Error()})
				return
			}
			http.Redirect(w, r, callback(r.Context(), id), http.StatusFound)
			return
		}
		_ = loginPage.Execute(w, map[string]string{"ID": r.URL.Query().Get("id")})
	}))
	mux.HandleFunc("/logged-out", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("signed out at the provider")) })
	mux.Handle("/", prov)
	p.handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p.wrongIssuer.Load() && r.URL.Path == "/oauth/token" {
			// Another host name: the ID token's issuer is no longer the one discovered.
			_, port, _ := net.SplitHostPort(r.Host)
			r.Host = "localhost:" + port
		}
		mux.ServeHTTP(w, r)
	})
	return p, nil
}

// Handler serves the provider (discovery, authorize, token, keys, login form).
func (p *Provider) Handler() http.Handler { return p.handler }

// Start serves the provider on a loopback port for the test's lifetime.
func Start(t testing.TB, o Options) *Provider {
	t.Helper()
	p, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p.handler)
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

// AddRedirectURI registers one more callback URL of the client.
func (p *Provider) AddRedirectURI(u string) {
	p.st.mu.Lock()
	defer p.st.mu.Unlock()
	p.st.client.redirectURIs = append(p.st.client.redirectURIs, u)
}

// SetGroups changes a user's groups (claims at their next sign-in).
func (p *Provider) SetGroups(username string, groups ...string) {
	p.st.mu.Lock()
	defer p.st.mu.Unlock()
	p.st.users[username].Groups = groups
}

// SetNonce makes ID tokens of new sign-ins carry this nonce instead of the
// relying party's ("" restores honest behaviour).
func (p *Provider) SetNonce(n string) {
	p.st.mu.Lock()
	defer p.st.mu.Unlock()
	p.st.nonceOverride = n
}

// SetWrongIssuer makes the token endpoint sign ID tokens as another issuer.
func (p *Provider) SetWrongIssuer(on bool) { p.wrongIssuer.Store(on) }

// ExpireCodes makes every authorization code expired when redeemed
// (false restores a one-minute lifetime).
func (p *Provider) ExpireCodes(on bool) {
	p.st.mu.Lock()
	defer p.st.mu.Unlock()
	p.st.codeTTL = time.Minute
	if on {
		p.st.codeTTL = -time.Nanosecond
	}
}

var loginPage = template.Must(template.New("login").Parse(strings.TrimSpace(`
<!doctype html><html><head><title>Test provider sign-in</title></head><body>
<h1>Test OpenID provider</h1>
{{if .Error}}<p id="error">{{.Error}}</p>{{end}}
<form method="post" action="/login">
<input type="hidden" name="id" value="{{.ID}}">
<label>Username <input id="username" name="username"></label>
<label>Password <input id="password" name="password" type="password"></label>
<button id="submit" type="submit">Sign in</button>
</form></body></html>`)))

// String describes the provider for logs.
func (p *Provider) String() string { return fmt.Sprintf("oidctest provider at %s", p.URL) }
