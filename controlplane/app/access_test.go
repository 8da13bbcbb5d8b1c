package app

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/httpapi"
	"github.com/heteroflow/heteroflow/controlplane/server"
)

// roles are the callers walked over every route; agent is a node's key
// obtained by enrolling through the API.
var roles = []controlplane.Role{controlplane.RoleAdmin, controlplane.RoleOperator, controlplane.RoleUser,
	controlplane.RoleViewer, controlplane.RoleAgent}

// open lists the routes that may be called without a permission from the
// table. A route added as Public or Authenticated by mistake would pass
// every status check below, so it must be named here on purpose.
var open = map[string]bool{
	"GET /health": true, "GET /health/ready": true, "GET /health/live": true, "GET /api/v1/openapi.json": true,
	"POST /api/v1/auth/login": true, "POST /api/v1/auth/refresh": true, "POST /api/v1/auth/register": true,
	"POST /api/v1/auth/logout": true, "GET /api/v1/auth/me": true,
	"GET /api/v1/auth/tenants": true, "PUT /api/v1/auth/tenant": true,
	// single sign-on: the providers list, the browser's redirects, the hand-off and logout
	"GET /api/v1/auth/oidc/providers": true, "GET /api/v1/auth/oidc/{provider}/start": true,
	"GET /api/v1/auth/oidc/{provider}/callback": true, "POST /api/v1/auth/oidc/session": true, "POST /api/v1/auth/oidc/logout": true,
	"POST /api/v1/agents/enroll": true, "GET /downloads/{file}": true, "GET /deploy-agent-all-in-one.sh": true,
}

// fixture holds the credentials and real resource ids the walk uses.
type fixture struct {
	s       *testServer
	tokens  map[controlplane.Role]string
	viewer  string // username, for login and refresh
	ids     map[string]string
	counter int
}

func newFixture(t *testing.T) *fixture {
	// A hub, so that the multi-cluster routes are walked too.
	s := startServerWith(t, t.TempDir(), func(c *server.Config) { c.Hub.Enabled = true })
	admin := s.adminToken()
	f := &fixture{s: s, tokens: map[controlplane.Role]string{controlplane.RoleAdmin: admin}, viewer: "viewer1", ids: map[string]string{}}
	for _, r := range []controlplane.Role{controlplane.RoleOperator, controlplane.RoleUser, controlplane.RoleViewer} {
		_, f.tokens[r] = s.userWithRole(admin, string(r)+"1", string(r))
	}
	node, agentKey := s.enrollNode(admin, "walk-node", "nvidia", 1)
	f.tokens[controlplane.RoleAgent] = agentKey
	f.ids["nodes"] = node
	// Self-registration is a public route that answers 403 while disabled.
	s.ok(http.StatusOK, http.MethodPut, "/api/v1/settings/registration", admin, map[string]bool{"enabled": true}, nil)

	created := func(path string, body any) string {
		var out struct {
			ID int64 `json:"id"`
		}
		s.ok(http.StatusCreated, http.MethodPost, path, admin, body, &out)
		return strconv.FormatInt(out.ID, 10)
	}
	// Resources that a walked DELETE may remove: throwaways, never the
	// callers' own users or keys.
	f.ids["users"] = created("/api/v1/users", map[string]string{"username": "victim", "password": testPassword, "role": "viewer"})
	f.ids["apikeys"] = created("/api/v1/apikeys", map[string]string{"name": "walk", "role": "viewer"})
	f.ids["bootstrap-tokens"] = created("/api/v1/bootstrap-tokens", map[string]any{"description": "walk"})
	// Tenant "walk" with a project, a throwaway member and the walked
	// task in it, so tenant-scoped routes and the tenant relation matrix
	// (access_tenants_test.go) find real rows.
	s.ok(http.StatusCreated, http.MethodPost, "/api/v1/tenants", admin, map[string]string{"name": "walk"}, nil)
	f.ids["quotas"] = created("/api/v1/quotas", map[string]any{"tenant": "walk", "devices": 4, "policy": "queue"})
	s.ok(http.StatusCreated, http.MethodPost, "/api/v1/tenants/walk/projects", admin, map[string]string{"name": "walkproj"}, nil)
	s.ok(http.StatusCreated, http.MethodPost, "/api/v1/tenants", admin, map[string]string{"name": "elsewhere"}, nil)
	created("/api/v1/users", map[string]string{"username": "walkmember", "password": testPassword, "role": "user"})
	s.ok(http.StatusOK, http.MethodPut, "/api/v1/tenants/walk/members/walkmember", admin, map[string]string{"role": "member"}, nil)
	f.ids["tenants"], f.ids["projects"], f.ids["members"] = "walk", "walkproj", "walkmember"
	f.ids["tasks"] = created("/api/v1/tasks", map[string]any{"name": "walk", "command": []string{"true"}, "tenant": "walk"})
	var plugins struct {
		Items []struct {
			Name string `json:"name"`
		} `json:"items"`
	}
	s.ok(http.StatusOK, http.MethodGet, "/api/v1/plugins", admin, nil, &plugins)
	require.NotEmpty(t, plugins.Items)
	f.ids["plugins"] = plugins.Items[0].Name
	return f
}

func (f *fixture) unique(p string) string { f.counter++; return fmt.Sprintf("%s%d", p, f.counter) }

// special builds requests that need real credentials in the body or a
// short wait; every other route gets its path filled by fill and an empty
// JSON object as body.
var special = map[string]func(f *fixture) (string, any){
	"POST /api/v1/auth/login": func(f *fixture) (string, any) {
		return "/api/v1/auth/login", map[string]string{"username": f.viewer, "password": testPassword}
	},
	"POST /api/v1/auth/refresh": func(f *fixture) (string, any) {
		_, refresh := f.s.login(f.viewer, testPassword)
		return "/api/v1/auth/refresh", map[string]string{"refresh_token": refresh}
	},
	"POST /api/v1/auth/register": func(f *fixture) (string, any) {
		return "/api/v1/auth/register", map[string]string{"username": f.unique("reg"), "password": testPassword}
	},
	"POST /api/v1/agents/enroll": func(f *fixture) (string, any) {
		_, tok := f.s.bootstrapToken(f.tokens[controlplane.RoleAdmin])
		return "/api/v1/agents/enroll", enrollBody(tok, f.unique("enroll"), "nvidia", 1)
	},
	// Long polls and management calls wait for an agent: ask for no wait.
	"GET /api/v1/agents/assignments": func(*fixture) (string, any) { return "/api/v1/agents/assignments?wait=10ms", nil },
	"POST /api/v1/nodes/{id}/agent-logs": func(f *fixture) (string, any) {
		return "/api/v1/nodes/" + f.ids["nodes"] + "/agent-logs?wait=0", nil
	},
	"POST /api/v1/nodes/{id}/agent-status": func(f *fixture) (string, any) {
		return "/api/v1/nodes/" + f.ids["nodes"] + "/agent-status?wait=0", nil
	},
	"POST /api/v1/nodes/{id}/config": func(f *fixture) (string, any) {
		return "/api/v1/nodes/" + f.ids["nodes"] + "/config?wait=0", map[string]any{"log_level": "info"}
	},
	"* /prometheus/*": func(*fixture) (string, any) { return "/prometheus/api/v1/labels", nil },
	// Revoking a node ends its agent key: revoke a throwaway node, never
	// the one whose key walks the routes as agent.
	"POST /api/v1/nodes/{id}/revoke": func(f *fixture) (string, any) {
		node, _ := f.s.enrollNode(f.tokens[controlplane.RoleAdmin], f.unique("revokable"), "nvidia", 1)
		return "/api/v1/nodes/" + node + "/revoke", nil
	},
}

var param = regexp.MustCompile(`([^/]+)/\{([^}]+)\}`)

// fill substitutes path parameters with a real id of the collection they
// follow (users/{id} → the throwaway user), or "1" where there is none.
func (f *fixture) fill(pattern string) string {
	return param.ReplaceAllStringFunc(pattern, func(m string) string {
		sub := param.FindStringSubmatch(m)
		if id, ok := f.ids[sub[1]]; ok {
			return sub[1] + "/" + id
		}
		return sub[1] + "/1"
	})
}

func (f *fixture) request(rt httpapi.Route) (method, path string, body any) {
	method = rt.Method
	if method == "*" {
		method = http.MethodGet // a mounted subtree: every method, probe with GET
	}
	if b, ok := special[rt.Method+" "+rt.Path]; ok {
		path, body = b(f)
		return method, path, body
	}
	path = strings.TrimSuffix(f.fill(rt.Path), "*")
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch:
		body = map[string]any{}
	}
	return method, path, body
}

// TestRouteAccess walks every route of the assembled server — core API,
// metrics store, agent API, scheduling — as anonymous, with a bad token
// and as every role, and holds each answer to the route's declared Access:
// anonymous → 401 unless public; allowed → neither 401 nor 403 (a 4xx for
// a placeholder body or id is fine) and no 5xx; denied → exactly 403. A
// route that forgets its access rule, or whose handler enforces something
// other than what it declares, fails here.
func TestRouteAccess(t *testing.T) {
	f := newFixture(t)
	routes := f.s.app.API().Routes()
	// Deletes last, so that the other routes still find the fixture's ids.
	sort.SliceStable(routes, func(i, j int) bool {
		return routes[i].Method != http.MethodDelete && routes[j].Method == http.MethodDelete
	})
	mounted := map[string]bool{}
	for _, rt := range routes {
		key := rt.Method + " " + rt.Path
		mounted[key] = true
		if rt.Access.Public || rt.Access.Authenticated {
			require.True(t, open[key], "%s is %s: add it to open if that is intended", key, rt.Access)
		}
		t.Run(key, func(t *testing.T) {
			call := func(who, cred string) reply {
				method, path, body := f.request(rt)
				r := f.s.do(method, path, cred, body)
				t.Logf("%-9s %s %s → %d", who, method, path, r.Status)
				return r
			}
			denied := func(who string, r reply, status int, code string) {
				require.Equal(t, status, r.Status, "%s as %s: want %d: %s", key, who, status, r.Body)
				var e errorBody
				require.NoError(t, json.Unmarshal(r.Body, &e), "%s as %s: %s", key, who, r.Body)
				if code == "forbidden" && rt.Access.Tenant != httpapi.NoTenantRule && e.Error.Code == httpapi.CodeTenantForbidden {
					return // refused by the route's tenant rule
				}
				require.Equal(t, code, e.Error.Code, "%s as %s: %s", key, who, r.Body)
			}
			allowed := func(who string, r reply) {
				require.NotContains(t, []int{http.StatusUnauthorized, http.StatusForbidden}, r.Status,
					"%s as %s is allowed by %s: %s", key, who, rt.Access, r.Body)
				require.Less(t, r.Status, 500, "%s as %s: %s", key, who, r.Body)
			}
			if rt.Access.Public {
				allowed("anonymous", call("anonymous", ""))
			} else {
				denied("anonymous", call("anonymous", ""), http.StatusUnauthorized, "unauthenticated")
				denied("bad token", call("bad token", "hf_nope_nope"), http.StatusUnauthorized, "unauthenticated")
			}
			for _, role := range roles {
				r := call(string(role), f.tokens[role])
				if rt.Access.AllowsIn(role, httpapi.RelNone) { // these callers belong to no tenant
					allowed(string(role), r)
				} else {
					denied(string(role), r, http.StatusForbidden, "forbidden")
				}
			}
		})
	}
	// The walk covers what every subsystem mounted, not just the core API.
	for _, key := range []string{"POST /api/v1/write", "* /prometheus/*", "POST /api/v1/agents/heartbeat",
		"POST /api/v1/nodes/{id}/drain", "POST /api/v1/quotas", "GET /api/v1/tasks/{id}/why", "GET /api/v1/users"} {
		require.True(t, mounted[key], "%s is not mounted", key)
	}
	for key := range special {
		require.True(t, mounted[key], "special request for %s, which is not mounted", key)
	}
}
