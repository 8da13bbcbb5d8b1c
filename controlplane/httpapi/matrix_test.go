package httpapi

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/auth"
)

var (
	anyRole     = []controlplane.Role{"admin", "operator", "user", "viewer", "agent"}
	adminOnly   = []controlplane.Role{"admin"}
	operatorUp  = []controlplane.Role{"admin", "operator"}
	submitters  = []controlplane.Role{"admin", "operator", "user"}
	taskReaders = anyRole
)

// matrixCase says who may call a route and how to build a valid request
// for role r (fresh resources each time, so every allowed call succeeds).
type matrixCase struct {
	public bool
	// status is what a public route answers the matrix's anonymous
	// request when that is not 2xx (0: any 2xx).
	status  int
	allowed []controlplane.Role
	req     func(e *env, r controlplane.Role) (path string, body any)
}

func fixed(path string, body any) func(*env, controlplane.Role) (string, any) {
	return func(*env, controlplane.Role) (string, any) { return path, body }
}

// matrix is the contract of docs/api-contract.md, one entry per route.
var matrix = map[string]matrixCase{
	"GET /health":              {public: true, req: fixed("/health", nil)},
	"GET /health/ready":        {public: true, req: fixed("/health/ready", nil)},
	"GET /health/live":         {public: true, req: fixed("/health/live", nil)},
	"GET /metrics":             {allowed: []controlplane.Role{"admin", "operator", "user", "viewer"}, req: fixed("/metrics", nil)},
	"GET /api/v1/openapi.json": {public: true, req: fixed("/api/v1/openapi.json", nil)},
	"POST /api/v1/auth/login": {public: true, req: func(e *env, _ controlplane.Role) (string, any) {
		return "/api/v1/auth/login", map[string]string{"username": "viewer1", "password": testPassword}
	}},
	"POST /api/v1/auth/refresh": {public: true, req: func(e *env, _ controlplane.Role) (string, any) {
		s, err := e.auth.Login(context.Background(), "viewer1", testPassword, "10.0.0.1")
		require.NoError(e.t, err)
		return "/api/v1/auth/refresh", map[string]string{"refresh_token": s.RefreshToken}
	}},
	"POST /api/v1/auth/register": {public: true, req: func(e *env, _ controlplane.Role) (string, any) {
		return "/api/v1/auth/register", map[string]string{"username": e.unique("reg"), "password": testPassword}
	}},
	"POST /api/v1/auth/logout": {allowed: anyRole, req: fixed("/api/v1/auth/logout", map[string]string{"refresh_token": "unknown"})},
	"GET /api/v1/auth/me":      {allowed: anyRole, req: fixed("/api/v1/auth/me", nil)},
	// Single sign-on with no provider configured: the list is empty, a
	// start or callback sends the browser back to /login with the code
	// (followed here: the API has no /login, 404), and a session
	// redemption without the hand-off cookie is bad input.
	"GET /api/v1/auth/oidc/providers":           {public: true, req: fixed("/api/v1/auth/oidc/providers", nil)},
	"GET /api/v1/auth/oidc/{provider}/start":    {public: true, status: http.StatusNotFound, req: fixed("/api/v1/auth/oidc/corp/start", nil)},
	"GET /api/v1/auth/oidc/{provider}/callback": {public: true, status: http.StatusNotFound, req: fixed("/api/v1/auth/oidc/corp/callback?state=x&code=y", nil)},
	"POST /api/v1/auth/oidc/session":            {public: true, status: http.StatusBadRequest, req: fixed("/api/v1/auth/oidc/session", nil)},
	"POST /api/v1/auth/oidc/logout":             {allowed: anyRole, req: fixed("/api/v1/auth/oidc/logout", map[string]string{"refresh_token": "unknown"})},
	"GET /api/v1/users":                         {allowed: adminOnly, req: fixed("/api/v1/users?role=viewer&q=view", nil)},
	"POST /api/v1/users": {allowed: adminOnly, req: func(e *env, _ controlplane.Role) (string, any) {
		return "/api/v1/users", map[string]string{"username": e.unique("u"), "password": testPassword, "role": "user"}
	}},
	"GET /api/v1/users/{id}": {allowed: adminOnly, req: func(e *env, _ controlplane.Role) (string, any) {
		return fmt.Sprintf("/api/v1/users/%d", e.users["viewer"].ID), nil
	}},
	"PATCH /api/v1/users/{id}": {allowed: adminOnly, req: func(e *env, _ controlplane.Role) (string, any) {
		return fmt.Sprintf("/api/v1/users/%d", e.users["viewer"].ID), map[string]string{"display_name": "V"}
	}},
	"DELETE /api/v1/users/{id}": {allowed: adminOnly, req: func(e *env, _ controlplane.Role) (string, any) {
		return fmt.Sprintf("/api/v1/users/%d", e.createUser(e.unique("del"), "viewer").ID), nil
	}},
	"POST /api/v1/users/{id}/approve": {allowed: adminOnly, req: func(e *env, _ controlplane.Role) (string, any) {
		return fmt.Sprintf("/api/v1/users/%d/approve", e.createUser(e.unique("ap"), "user").ID), nil
	}},
	"POST /api/v1/users/{id}/unlock": {allowed: adminOnly, req: func(e *env, _ controlplane.Role) (string, any) {
		return fmt.Sprintf("/api/v1/users/%d/unlock", e.createUser(e.unique("lk"), "user").ID), nil
	}},
	"GET /api/v1/settings/registration": {allowed: adminOnly, req: fixed("/api/v1/settings/registration", nil)},
	"PUT /api/v1/settings/registration": {allowed: adminOnly, req: fixed("/api/v1/settings/registration", map[string]bool{"enabled": true})},
	"GET /api/v1/settings/links":        {allowed: []controlplane.Role{"admin", "operator", "user", "viewer"}, req: fixed("/api/v1/settings/links", nil)},
	"GET /api/v1/apikeys":               {allowed: operatorUp, req: fixed("/api/v1/apikeys", nil)},
	"POST /api/v1/apikeys":              {allowed: operatorUp, req: fixed("/api/v1/apikeys", map[string]string{"name": "k", "role": "viewer"})},
	"DELETE /api/v1/apikeys/{id}": {allowed: operatorUp, req: func(e *env, r controlplane.Role) (string, any) {
		owner := e.owner(r)
		p := &auth.Principal{UserID: owner.ID, Username: owner.Username, Role: controlplane.RoleAdmin}
		_, k, err := e.auth.CreateAPIKey(context.Background(), p, "tmp", controlplane.RoleViewer, "", nil)
		require.NoError(e.t, err)
		return fmt.Sprintf("/api/v1/apikeys/%d", k.ID), nil
	}},
	"POST /api/v1/tasks": {allowed: submitters, req: fixed("/api/v1/tasks", map[string]any{"name": "m", "command": []string{"true"}})},
	"GET /api/v1/tasks":  {allowed: taskReaders, req: fixed("/api/v1/tasks?state=submitted,queued&label=a=b&q=x", nil)},
	"GET /api/v1/tasks/{id}": {allowed: taskReaders, req: func(e *env, r controlplane.Role) (string, any) {
		return fmt.Sprintf("/api/v1/tasks/%d", e.taskFor(r).ID), nil
	}},
	"POST /api/v1/tasks/{id}/cancel": {allowed: submitters, req: func(e *env, r controlplane.Role) (string, any) {
		return fmt.Sprintf("/api/v1/tasks/%d/cancel", e.createTask(e.owner(r)).ID), nil
	}},
	"GET /api/v1/tasks/{id}/events": {allowed: taskReaders, req: func(e *env, r controlplane.Role) (string, any) {
		return fmt.Sprintf("/api/v1/tasks/%d/events", e.taskFor(r).ID), nil
	}},
	"GET /api/v1/audit": {allowed: operatorUp, req: fixed("/api/v1/audit?module=api&level=INFO&q=task", nil)},
	// Tenancy: the callers here belong to no tenant, so routes scoped to
	// members or tenant admins of {tenant} admit only cluster roles (the
	// app's route walk covers every tenant relation).
	"GET /api/v1/auth/tenants": {allowed: anyRole, req: fixed("/api/v1/auth/tenants", nil)},
	"PUT /api/v1/auth/tenant": {allowed: []controlplane.Role{"admin", "operator", "user", "viewer"},
		req: fixed("/api/v1/auth/tenant", map[string]string{"tenant": ""})},
	"GET /api/v1/tenants": {allowed: []controlplane.Role{"admin", "operator", "user", "viewer"}, req: fixed("/api/v1/tenants", nil)},
	"POST /api/v1/tenants": {allowed: adminOnly, req: func(e *env, _ controlplane.Role) (string, any) {
		return "/api/v1/tenants", map[string]string{"name": e.unique("t")}
	}},
	"GET /api/v1/tenants/{tenant}": {allowed: operatorUp, req: func(e *env, _ controlplane.Role) (string, any) { return "/api/v1/tenants/" + e.tenant(), nil }},
	"PATCH /api/v1/tenants/{tenant}": {allowed: adminOnly, req: func(e *env, _ controlplane.Role) (string, any) {
		return "/api/v1/tenants/" + e.tenant(), map[string]string{"display_name": "T"}
	}},
	"GET /api/v1/tenants/{tenant}/members": {allowed: operatorUp, req: func(e *env, _ controlplane.Role) (string, any) {
		return "/api/v1/tenants/" + e.tenant() + "/members", nil
	}},
	"PUT /api/v1/tenants/{tenant}/members/{user}": {allowed: adminOnly, req: func(e *env, _ controlplane.Role) (string, any) {
		return "/api/v1/tenants/" + e.tenant() + "/members/" + e.createUser(e.unique("m"), "user").Username, map[string]string{"role": "member"}
	}},
	"DELETE /api/v1/tenants/{tenant}/members/{user}": {allowed: adminOnly, req: func(e *env, _ controlplane.Role) (string, any) {
		t, u := e.tenant(), e.createUser(e.unique("m"), "user")
		_, err := e.store.(controlplane.TenantStore).PutMember(context.Background(), t, u.ID, controlplane.TenantMemberRole)
		require.NoError(e.t, err)
		return "/api/v1/tenants/" + t + "/members/" + u.Username, nil
	}},
	"GET /api/v1/tenants/{tenant}/projects": {allowed: operatorUp, req: func(e *env, _ controlplane.Role) (string, any) {
		return "/api/v1/tenants/" + e.tenant() + "/projects", nil
	}},
	"POST /api/v1/tenants/{tenant}/projects": {allowed: adminOnly, req: func(e *env, _ controlplane.Role) (string, any) {
		return "/api/v1/tenants/" + e.tenant() + "/projects", map[string]string{"name": e.unique("p")}
	}},
	"PATCH /api/v1/tenants/{tenant}/projects/{project}": {allowed: adminOnly, req: func(e *env, _ controlplane.Role) (string, any) {
		t, p := e.tenant(), e.unique("p")
		require.NoError(e.t, e.store.(controlplane.TenantStore).CreateProject(context.Background(), &controlplane.Project{Tenant: t, Name: p}))
		return "/api/v1/tenants/" + t + "/projects/" + p, map[string]bool{"disabled": true}
	}},
	// Scoped keys are minted by members of the tenant only, so the
	// tenant-less callers here are all refused creation.
	"GET /api/v1/tenants/{tenant}/apikeys": {allowed: operatorUp, req: func(e *env, _ controlplane.Role) (string, any) {
		return "/api/v1/tenants/" + e.tenant() + "/apikeys", nil
	}},
	"POST /api/v1/tenants/{tenant}/apikeys": {allowed: nil, req: func(e *env, _ controlplane.Role) (string, any) {
		return "/api/v1/tenants/" + e.tenant() + "/apikeys", map[string]string{"name": "k"}
	}},
	"DELETE /api/v1/tenants/{tenant}/apikeys/{id}": {allowed: operatorUp, req: func(e *env, r controlplane.Role) (string, any) {
		t, owner := e.tenant(), e.owner(r)
		p := &auth.Principal{UserID: owner.ID, Username: owner.Username, Role: controlplane.RoleUser}
		_, k, err := e.auth.CreateTenantAPIKey(context.Background(), p, "tk", controlplane.RoleViewer, t, nil)
		require.NoError(e.t, err)
		return fmt.Sprintf("/api/v1/tenants/%s/apikeys/%d", t, k.ID), nil
	}},
}

// tenant creates a fresh tenant and returns its name.
func (e *env) tenant() string {
	name := e.unique("tn")
	require.NoError(e.t, e.store.(controlplane.TenantStore).CreateTenant(context.Background(), &controlplane.Tenant{Name: name}))
	return name
}

// TestPermissionMatrix calls every registered route as anonymous and as
// every role: allowed → 2xx, denied → 403, anonymous → 401. It walks
// api.Routes(), so a route added without a matrix entry fails here.
func TestPermissionMatrix(t *testing.T) {
	e := newEnv(t)
	seen := map[string]bool{}
	for _, rt := range e.api.Routes() {
		key := rt.Method + " " + rt.Path
		seen[key] = true
		mc, ok := matrix[key]
		if !ok {
			t.Errorf("route %s (%s) has no permission-matrix entry", key, rt.Access)
			continue
		}
		require.Equal(t, mc.public, rt.Access.Public, "%s: declared access %s", key, rt.Access)
		t.Run(key, func(t *testing.T) {
			check := func(who string, token string, want func(int) bool, desc string, r controlplane.Role) {
				path, body := mc.req(e, r)
				res := e.raw(rt.Method, path, token, body)
				b, _ := io.ReadAll(res.Body)
				res.Body.Close()
				require.True(t, want(res.StatusCode), "%s as %s: got %d, want %s: %s", key, who, res.StatusCode, desc, b)
			}
			ok2xx := func(s int) bool { return s >= 200 && s < 300 }
			if mc.public {
				want, desc := ok2xx, "2xx"
				if mc.status != 0 {
					want, desc = func(s int) bool { return s == mc.status }, fmt.Sprint(mc.status)
				}
				check("anonymous", "", want, desc, "")
			} else {
				check("anonymous", "", func(s int) bool { return s == http.StatusUnauthorized }, "401", "")
				check("bad token", "not-a-token", func(s int) bool { return s == http.StatusUnauthorized }, "401", "")
			}
			for _, r := range anyRole {
				allowed := mc.public
				for _, a := range mc.allowed {
					allowed = allowed || a == r
				}
				if allowed && mc.status != 0 {
					check(string(r), e.tokens[r], func(s int) bool { return s == mc.status }, fmt.Sprint(mc.status), r)
				} else if allowed {
					check(string(r), e.tokens[r], ok2xx, "2xx", r)
				} else {
					check(string(r), e.tokens[r], func(s int) bool { return s == http.StatusForbidden }, "403", r)
				}
			}
		})
	}
	for key := range matrix {
		require.True(t, seen[key], "matrix entry %s has no route", key)
	}
}

// taskFor is a task role r may see: its own, or for the agent key one
// placed on its node (node-1).
func (e *env) taskFor(r controlplane.Role) *controlplane.Task {
	t := e.createTask(e.owner(r))
	if r != controlplane.RoleAgent {
		return t
	}
	ctx := context.Background()
	_, err := e.store.TransitionTask(ctx, controlplane.Transition{TaskID: t.ID, From: controlplane.TaskSubmitted, To: controlplane.TaskQueued})
	require.NoError(e.t, err)
	node := "node-1"
	t, err = e.store.TransitionTask(ctx, controlplane.Transition{TaskID: t.ID, From: controlplane.TaskQueued,
		To: controlplane.TaskScheduled, NodeID: &node})
	require.NoError(e.t, err)
	return t
}

// owner is the user acting as role r (the admin for anonymous calls).
func (e *env) owner(r controlplane.Role) *controlplane.User {
	if u, ok := e.users[r]; ok {
		return u
	}
	return e.users[controlplane.RoleAdmin]
}
