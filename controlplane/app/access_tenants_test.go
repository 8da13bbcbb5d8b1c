package app

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/httpapi"
)

// relCaller is one caller of the tenant matrix: a cluster role and a
// relation to tenant "walk" (the tenant every {tenant} path names and the
// walked task lives in).
type relCaller struct {
	role  controlplane.Role
	rel   httpapi.Relation
	token string
}

// relationCallers creates, for every human role, one user per relation:
// none (no tenant), other (member of "elsewhere"), and viewer, member and
// tenant-admin of "walk".
func relationCallers(f *fixture) []relCaller {
	admin := f.tokens[controlplane.RoleAdmin]
	var out []relCaller
	for _, role := range []controlplane.Role{controlplane.RoleAdmin, controlplane.RoleOperator, controlplane.RoleUser, controlplane.RoleViewer} {
		for _, rel := range httpapi.Relations() {
			name := fmt.Sprintf("%s-%s", role, rel)
			_, tok := f.s.userWithRole(admin, name, string(role))
			switch rel {
			case httpapi.RelOther:
				f.s.ok(http.StatusOK, http.MethodPut, "/api/v1/tenants/elsewhere/members/"+name, admin, map[string]string{"role": "tenant-admin"}, nil)
			case httpapi.RelViewer, httpapi.RelMember, httpapi.RelTenantAdmin:
				f.s.ok(http.StatusOK, http.MethodPut, "/api/v1/tenants/walk/members/"+name, admin, map[string]string{"role": string(rel)}, nil)
			}
			out = append(out, relCaller{role: role, rel: rel, token: tok})
		}
	}
	return append(out, relCaller{role: controlplane.RoleAgent, rel: httpapi.RelNone, token: f.tokens[controlplane.RoleAgent]})
}

// TestRouteAccessByTenant is the permission matrix of every route of the
// assembled server × every role × every relation to the tenant the
// request concerns, generated from the router: each answer must match
// the route's declared Access (AllowsIn): allowed → neither 401 nor 403
// and no 5xx; denied → 403. A route mounted without an access rule fails
// TestRouteAccess; one whose handler applies a tenant rule it does not
// declare (or declares one it does not apply) fails here.
func TestRouteAccessByTenant(t *testing.T) {
	f := newFixture(t)
	callers := relationCallers(f)
	routes := f.s.app.API().Routes()
	sort.SliceStable(routes, func(i, j int) bool {
		return routes[i].Method != http.MethodDelete && routes[j].Method == http.MethodDelete
	})
	cells := 0
	for _, rt := range routes {
		if rt.Access.Public {
			continue
		}
		key := rt.Method + " " + rt.Path
		t.Run(key, func(t *testing.T) {
			for _, c := range callers {
				method, path, body := f.request(rt)
				r := f.s.do(method, path, c.token, body)
				who := fmt.Sprintf("%s/%s", c.role, c.rel)
				cells++
				if rt.Access.AllowsIn(c.role, c.rel) {
					if c.rel == httpapi.RelViewer && r.Status == http.StatusForbidden && rt.Method != http.MethodGet {
						// The route admits the caller, the object does not: a
						// tenant's viewer sees its tasks and workflows but acts
						// on none it does not own (httpapi.TaskActionable).
						var e errorBody
						require.NoError(t, json.Unmarshal(r.Body, &e), "%s as %s: %s", key, who, r.Body)
						require.Equal(t, httpapi.CodeTenantReadOnly, e.Error.Code, "%s as %s: %s", key, who, r.Body)
						continue
					}
					require.NotContains(t, []int{http.StatusUnauthorized, http.StatusForbidden}, r.Status,
						"%s as %s is allowed by %s: %s", key, who, rt.Access, r.Body)
					require.Less(t, r.Status, 500, "%s as %s: %s", key, who, r.Body)
					continue
				}
				require.Equal(t, http.StatusForbidden, r.Status, "%s as %s is denied by %s: %s", key, who, rt.Access, r.Body)
				var e errorBody
				require.NoError(t, json.Unmarshal(r.Body, &e), "%s as %s: %s", key, who, r.Body)
				require.Contains(t, []string{"forbidden", httpapi.CodeTenantForbidden}, e.Error.Code)
			}
		})
	}
	require.Greater(t, cells, 21*100, "the matrix walks every route with every caller")
}

// TestTaskVisibilityByTenant: the walked task lives in tenant "walk",
// owned by the admin. Who sees it, per role and relation (the expected
// table is written out, not derived from the policy under test).
func TestTaskVisibilityByTenant(t *testing.T) {
	f := newFixture(t)
	callers := relationCallers(f)
	sees := map[string]bool{
		"admin/none": true, "admin/other": true, "admin/viewer": true, "admin/member": true, "admin/tenant-admin": true,
		"operator/none": true, "operator/other": true, "operator/viewer": true, "operator/member": true, "operator/tenant-admin": true,
		"user/viewer": true, "user/tenant-admin": true, // a plain member sees only its own tasks
		"viewer/viewer": true, "viewer/member": true, "viewer/tenant-admin": true,
	}
	for _, c := range callers {
		if c.role == controlplane.RoleAgent {
			continue // agents see the tasks placed on their node (TestTaskIsolation)
		}
		who := fmt.Sprintf("%s/%s", c.role, c.rel)
		for _, path := range []string{"/api/v1/tasks/" + f.ids["tasks"], "/api/v1/tasks/" + f.ids["tasks"] + "/events",
			"/api/v1/tasks/" + f.ids["tasks"] + "/why", "/api/v1/tasks/" + f.ids["tasks"] + "/logs"} {
			r := f.s.do(http.MethodGet, path, c.token, nil)
			if sees[who] {
				require.Equal(t, http.StatusOK, r.Status, "%s %s: %s", who, path, r.Body)
			} else {
				require.Equal(t, http.StatusNotFound, r.Status, "%s %s: %s", who, path, r.Body)
			}
		}
		var l struct {
			Total int `json:"total"`
		}
		r := f.s.do(http.MethodGet, "/api/v1/tasks?tenant=walk", c.token, nil)
		switch {
		case c.rel == httpapi.RelNone || c.rel == httpapi.RelOther:
			if !sees[who] {
				require.Equal(t, http.StatusForbidden, r.Status, "%s lists another tenant: %s", who, r.Body)
				continue
			}
			fallthrough
		default:
			require.Equal(t, http.StatusOK, r.Status, "%s: %s", who, r.Body)
			require.NoError(t, json.Unmarshal(r.Body, &l))
			want := 0
			if sees[who] {
				want = 1
			}
			require.Equal(t, want, l.Total, "%s lists walk's tasks", who)
		}
	}
}
