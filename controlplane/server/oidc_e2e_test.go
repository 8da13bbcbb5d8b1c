package server

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/auth/oidcauth/oidctest"
)

// ssoBrowser is a browser without JavaScript: a cookie jar, and redirects
// followed one at a time so the test sees (and may tamper with) each hop.
type ssoBrowser struct {
	t      *testing.T
	client *http.Client
	api    string
}

func newSSOBrowser(t *testing.T, api string) *ssoBrowser {
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	return &ssoBrowser{t: t, api: api, client: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *ssoBrowser) do(method, rawURL string, form url.Values, hdr ...string) *http.Response {
	b.t.Helper()
	var body *strings.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	} else {
		body = strings.NewReader("")
	}
	req, err := http.NewRequest(method, rawURL, body)
	require.NoError(b.t, err)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := b.client.Do(req)
	require.NoError(b.t, err)
	b.t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// location resolves a redirect's target against the URL that answered it.
func location(t *testing.T, from string, resp *http.Response) string {
	t.Helper()
	require.Equal(t, http.StatusFound, resp.StatusCode, "a redirect from %s", from)
	base, err := url.Parse(from)
	require.NoError(t, err)
	loc, err := base.Parse(resp.Header.Get("Location"))
	require.NoError(t, err)
	return loc.String()
}

// toCallback starts a sign-in and signs in at the provider; it answers the
// callback URL the provider sends the browser to (not yet followed).
func (b *ssoBrowser) toCallback(provider, user, pass string) string {
	b.t.Helper()
	start := b.api + "/api/v1/auth/oidc/" + provider + "/start?return_to=/tasks"
	authURL := location(b.t, start, b.do(http.MethodGet, start, nil))
	loginURL := location(b.t, authURL, b.do(http.MethodGet, authURL, nil))
	u, _ := url.Parse(loginURL)
	form := url.Values{"id": {u.Query().Get("id")}, "username": {user}, "password": {pass}}
	done := location(b.t, loginURL, b.do(http.MethodPost, u.Scheme+"://"+u.Host+"/login", form))
	return location(b.t, done, b.do(http.MethodGet, done, nil))
}

// finish follows the callback and answers where the server sent the browser.
func (b *ssoBrowser) finish(callback string) *url.URL {
	b.t.Helper()
	loc, err := url.Parse(location(b.t, callback, b.do(http.MethodGet, callback, nil)))
	require.NoError(b.t, err)
	return loc
}

func (b *ssoBrowser) redeem() (int, map[string]any) {
	b.t.Helper()
	resp := b.do(http.MethodPost, b.api+"/api/v1/auth/oidc/session", nil)
	var out map[string]any
	require.NoError(b.t, json.NewDecoder(resp.Body).Decode(&out))
	return resp.StatusCode, out
}

func TestOIDCSingleSignOn(t *testing.T) {
	prov := oidctest.Start(t, oidctest.Options{ClientID: "heteroflow", ClientSecret: "client-secret",
		Users: []oidctest.User{
			{Subject: "sub-alice", Username: "alice", Password: "alice-pass", Name: "Alice Liddell", Email: "alice@example.org", Groups: []string{"hf-admins", "team-a"}},
			{Subject: "sub-bob", Username: "bob", Password: "bob-pass", Groups: []string{"team-a"}},
		}})
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	downIssuer := "http://" + closed.Addr().String()
	closed.Close()

	cfgFile := filepath.Join(t.TempDir(), "server.yaml")
	require.NoError(t, os.WriteFile(cfgFile, []byte(`auth:
  oidc:
    - name: corp
      display_name: Corp SSO
      issuer: `+prov.URL+`
      client_id: heteroflow
      scopes: [openid, profile, email, groups]
      group_roles:
        - {group: hf-admins, role: admin}
        - {group: team-a, role: user}
      group_tenants:
        - {group: team-a, tenant: team-a, role: member}
    - name: down
      issuer: `+downIssuer+`
      client_id: heteroflow
      default_role: viewer
`), 0o600))
	env := map[string]string{"HETEROFLOW_OIDC_CORP_CLIENT_SECRET": "client-secret", EnvAdminPassword: "Root-Passw0rd!9x"}
	cfg, err := Load(cfgFile, func(k string) string { return env[k] })
	require.NoError(t, err)
	cfg.APIAddr, cfg.ConsoleAddr, cfg.DataDir = "127.0.0.1:0", "", t.TempDir()
	s := startConfigured(t, cfg, env)
	api := "http://" + s.APIAddr()
	prov.AddRedirectURI(api + "/api/v1/auth/oidc/corp/callback")
	ts := s.Store().(controlplane.TenantStore)
	require.NoError(t, ts.CreateTenant(t.Context(), &controlplane.Tenant{Name: "team-a"}))

	t.Run("providers are listed for the login page", func(t *testing.T) {
		resp, err := http.Get(api + "/api/v1/auth/oidc/providers")
		require.NoError(t, err)
		defer resp.Body.Close()
		var out struct {
			Providers []map[string]string `json:"providers"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
		require.Len(t, out.Providers, 2)
		require.Equal(t, map[string]string{"name": "corp", "display_name": "Corp SSO", "start_url": "/api/v1/auth/oidc/corp/start"}, out.Providers[0])
	})

	var refresh string
	t.Run("sign-in creates the account from the claims and hands the session over once", func(t *testing.T) {
		b := newSSOBrowser(t, api)
		cb := b.toCallback("corp", "alice", "alice-pass")
		// PKCE and state travel to the provider and back.
		require.Contains(t, cb, "state=")
		landed := b.finish(cb)
		require.Equal(t, "/login/sso", landed.Path)
		require.Equal(t, "/tasks", landed.Query().Get("return_to"))
		st, out := b.redeem()
		require.Equal(t, http.StatusOK, st, out)
		u := out["user"].(map[string]any)
		require.Equal(t, "alice", u["username"])
		require.Equal(t, "oidc:corp", u["auth_source"])
		require.Equal(t, "admin", u["role"])
		require.Equal(t, "Alice Liddell", u["display_name"])
		refresh = out["refresh_token"].(string)
		ms, err := ts.ListMemberships(t.Context(), int64(u["id"].(float64)))
		require.NoError(t, err)
		require.Len(t, ms, 1)
		require.Equal(t, controlplane.TenantMemberRole, ms[0].Role)

		st, out = b.redeem()
		require.Equal(t, http.StatusBadRequest, st, "the hand-off cookie is spent: %v", out)
		require.Equal(t, "oidc_no_session", out["error"].(map[string]any)["code"])
	})

	t.Run("the claims mapping applies again at the next sign-in", func(t *testing.T) {
		prov.SetGroups("alice", "team-a")
		b := newSSOBrowser(t, api)
		b.finish(b.toCallback("corp", "alice", "alice-pass"))
		st, out := b.redeem()
		require.Equal(t, http.StatusOK, st, out)
		require.Equal(t, "user", out["user"].(map[string]any)["role"])
		prov.SetGroups("alice", "hf-admins", "team-a")
	})

	refusal := func(t *testing.T, landed *url.URL, code string) {
		t.Helper()
		require.Equal(t, "/login", landed.Path)
		require.Equal(t, code, landed.Query().Get("sso_error"))
	}

	t.Run("a callback whose state is not this browser's is refused", func(t *testing.T) {
		b := newSSOBrowser(t, api)
		cb, err := url.Parse(b.toCallback("corp", "bob", "bob-pass"))
		require.NoError(t, err)
		q := cb.Query()
		q.Set("state", "forged")
		cb.RawQuery = q.Encode()
		refusal(t, b.finish(cb.String()), "oidc_bad_state")

		// Another browser (no flow cookie) presenting a genuine callback.
		cb2 := b.toCallback("corp", "bob", "bob-pass")
		resp := newSSOBrowser(t, api).do(http.MethodGet, cb2, nil, "Accept", "application/json")
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
		var e map[string]map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&e))
		require.Equal(t, "oidc_bad_state", e["error"]["code"])
	})

	t.Run("an ID token with another nonce is refused", func(t *testing.T) {
		prov.SetNonce("replayed-nonce")
		defer prov.SetNonce("")
		b := newSSOBrowser(t, api)
		refusal(t, b.finish(b.toCallback("corp", "bob", "bob-pass")), "oidc_bad_token")
	})

	t.Run("an ID token from an unknown issuer is refused", func(t *testing.T) {
		prov.SetWrongIssuer(true)
		defer prov.SetWrongIssuer(false)
		b := newSSOBrowser(t, api)
		refusal(t, b.finish(b.toCallback("corp", "bob", "bob-pass")), "oidc_bad_token")
	})

	t.Run("an expired code is refused", func(t *testing.T) {
		prov.ExpireCodes(true)
		defer prov.ExpireCodes(false)
		b := newSSOBrowser(t, api)
		refusal(t, b.finish(b.toCallback("corp", "bob", "bob-pass")), "oidc_exchange_failed")
	})

	t.Run("a provider that does not answer fails closed", func(t *testing.T) {
		b := newSSOBrowser(t, api)
		resp := b.do(http.MethodGet, api+"/api/v1/auth/oidc/down/start", nil, "Accept", "application/json")
		require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
		var e map[string]map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&e))
		require.Equal(t, "oidc_provider_unavailable", e["error"]["code"])
		refusal(t, mustParse(t, location(t, api, b.do(http.MethodGet, api+"/api/v1/auth/oidc/nope/start", nil))), "oidc_unknown_provider")
	})

	t.Run("a local account is never taken over by a provider's user of its name", func(t *testing.T) {
		require.NoError(t, s.Store().CreateUser(t.Context(), &controlplane.User{Username: "bob", Role: controlplane.RoleViewer,
			Status: controlplane.UserActive, PasswordHash: "x"}))
		b := newSSOBrowser(t, api)
		landed := b.finish(b.toCallback("corp", "bob", "bob-pass"))
		refusal(t, landed, "sso_account_conflict")
		require.Equal(t, "bob", landed.Query().Get("sso_username"))
	})

	t.Run("logout ends our session and names the provider's logout page", func(t *testing.T) {
		b := newSSOBrowser(t, api)
		b.finish(b.toCallback("corp", "alice", "alice-pass"))
		_, out := b.redeem()
		access, rt := out["access_token"].(string), out["refresh_token"].(string)
		req, _ := http.NewRequest(http.MethodPost, api+"/api/v1/auth/oidc/logout", strings.NewReader(`{"refresh_token":"`+rt+`"}`))
		req.Header.Set("Authorization", "Bearer "+access)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var lo map[string]string
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&lo))
		require.Equal(t, http.StatusOK, resp.StatusCode, lo)
		end := mustParse(t, lo["end_session_url"])
		require.Equal(t, prov.URL+"/end_session", end.Scheme+"://"+end.Host+end.Path)
		require.Equal(t, "heteroflow", end.Query().Get("client_id"))
		require.Equal(t, api+"/login", end.Query().Get("post_logout_redirect_uri"))
		r2, err := http.Post(api+"/api/v1/auth/refresh", "application/json", strings.NewReader(`{"refresh_token":"`+rt+`"}`))
		require.NoError(t, err)
		r2.Body.Close()
		require.Equal(t, http.StatusUnauthorized, r2.StatusCode, "the session is over")
		_ = refresh
	})

	t.Run("every sign-in is audited", func(t *testing.T) {
		require.NoError(t, s.Auditor().Flush(t.Context()))
		entries, _, err := s.Store().ListAudit(t.Context(), controlplane.AuditFilter{Query: "auth.login.oidc"})
		require.NoError(t, err)
		var ok, denied int
		for _, e := range entries {
			if e.Result == "ok" {
				ok++
			} else if strings.HasPrefix(e.Result, "denied") {
				denied++
			}
		}
		require.GreaterOrEqual(t, ok, 3)
		require.GreaterOrEqual(t, denied, 5)
	})
}

func mustParse(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	require.NoError(t, err)
	return u
}
