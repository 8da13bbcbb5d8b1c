package httpapi

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
)

// tenancyEnv: tenants acme (ann tenant-admin, bob member, vic viewer) and
// globex (gil member), each user logged in.
type tenancyEnv struct {
	*env
	tok map[string]string
	ids map[string]int64
}

func newTenancyEnv(t *testing.T) *tenancyEnv {
	e := newEnv(t)
	te := &tenancyEnv{env: e, tok: map[string]string{}, ids: map[string]int64{}}
	ts := e.store.(controlplane.TenantStore)
	ctx := context.Background()
	admin := e.tokens[controlplane.RoleAdmin]
	for _, n := range []string{"acme", "globex"} {
		require.Equal(t, http.StatusCreated, e.call(http.MethodPost, "/api/v1/tenants", admin, map[string]string{"name": n, "display_name": n + " 公司"}, nil))
	}
	for _, m := range []struct {
		user, tenant string
		role         controlplane.TenantRole
	}{{"ann", "acme", controlplane.TenantAdminRole}, {"bob", "acme", controlplane.TenantMemberRole},
		{"vic", "acme", controlplane.TenantViewerRole}, {"gil", "globex", controlplane.TenantMemberRole}} {
		u := e.createUser(m.user, controlplane.RoleUser)
		_, err := ts.PutMember(ctx, m.tenant, u.ID, m.role)
		require.NoError(t, err)
		te.ids[m.user] = u.ID
		te.tok[m.user] = e.login(m.user, testPassword)
	}
	return te
}

func (te *tenancyEnv) submit(who, tenant string) (int, ErrorInfo, TaskJSON) {
	var out TaskJSON
	body := map[string]any{"name": "t-" + who, "command": []string{"true"}}
	if tenant != "" {
		body["tenant"] = tenant
	}
	st := te.call(http.MethodPost, "/api/v1/tasks", te.tok[who], body, &out)
	if st != http.StatusCreated {
		s, e := te.apiErr(http.MethodPost, "/api/v1/tasks", te.tok[who], body)
		return s, e, out
	}
	return st, ErrorInfo{}, out
}

// TestTaskTenantAdmission: a task's tenant is checked against the
// caller's memberships, with a stable code per refusal.
func TestTaskTenantAdmission(t *testing.T) {
	te := newTenancyEnv(t)
	admin := te.tokens[controlplane.RoleAdmin]
	off := true
	require.Equal(t, http.StatusCreated, te.call(http.MethodPost, "/api/v1/tenants", admin, map[string]string{"name": "closed"}, nil))
	require.Equal(t, http.StatusOK, te.call(http.MethodPatch, "/api/v1/tenants/closed", admin, map[string]any{"disabled": off}, nil))
	require.Equal(t, http.StatusCreated, te.call(http.MethodPost, "/api/v1/tenants/acme/projects", te.tok["ann"], map[string]string{"name": "vision"}, nil))
	require.Equal(t, http.StatusCreated, te.call(http.MethodPost, "/api/v1/tenants/acme/projects", te.tok["ann"], map[string]string{"name": "old"}, nil))
	require.Equal(t, http.StatusOK, te.call(http.MethodPatch, "/api/v1/tenants/acme/projects/old", te.tok["ann"], map[string]any{"disabled": true}, nil))

	cases := []struct {
		who, tenant, project string
		status               int
		code                 string
	}{
		{"bob", "acme", "", 201, ""},
		{"ann", "acme", "vision", 201, ""},
		{"bob", "globex", "", 403, CodeTenantForbidden},
		{"gil", "acme", "", 403, CodeTenantForbidden},
		{"vic", "acme", "", 403, CodeTenantReadOnly},
		{"bob", "nowhere", "", 400, CodeTenantNotFound},
		{"bob", "acme", "ghost", 400, CodeProjectNotFound},
		{"bob", "acme", "old", 403, CodeProjectDisabled},
	}
	for _, tc := range cases {
		t.Run(tc.who+"→"+tc.tenant+"/"+tc.project, func(t *testing.T) {
			body := map[string]any{"name": "x", "command": []string{"true"}, "tenant": tc.tenant}
			if tc.project != "" {
				body["project"] = tc.project
			}
			if tc.status == 201 {
				require.Equal(t, 201, te.call(http.MethodPost, "/api/v1/tasks", te.tok[tc.who], body, nil))
				return
			}
			st, er := te.apiErr(http.MethodPost, "/api/v1/tasks", te.tok[tc.who], body)
			require.Equal(t, tc.status, st, er.Message)
			require.Equal(t, tc.code, er.Code, er.Message)
			require.NotEmpty(t, er.Message)
		})
	}
	// Admins and operators act in every tenant, but not a disabled or missing one.
	require.Equal(t, 201, te.call(http.MethodPost, "/api/v1/tasks", te.tokens[controlplane.RoleOperator],
		map[string]any{"name": "op", "command": []string{"true"}, "tenant": "globex"}, nil))
	st, er := te.apiErr(http.MethodPost, "/api/v1/tasks", admin, map[string]any{"name": "x", "command": []string{"true"}, "tenant": "closed"})
	require.Equal(t, 403, st)
	require.Equal(t, CodeTenantDisabled, er.Code)
	st, er = te.apiErr(http.MethodPost, "/api/v1/tasks", admin, map[string]any{"name": "x", "command": []string{"true"}, "tenant": "nowhere"})
	require.Equal(t, 400, st)
	require.Equal(t, CodeTenantNotFound, er.Code)

	// A member removed from the tenant is refused at once, token unchanged.
	require.Equal(t, http.StatusNoContent, te.call(http.MethodDelete, "/api/v1/tenants/acme/members/bob", te.tok["ann"], nil, nil))
	st, er = te.apiErr(http.MethodPost, "/api/v1/tasks", te.tok["bob"], map[string]any{"name": "x", "command": []string{"true"}, "tenant": "acme"})
	require.Equal(t, 403, st)
	require.Equal(t, CodeTenantForbidden, er.Code)
}

// TestTenantTaskVisibility: tenant admins and viewers see the tenant's
// tasks, members their own; nobody sees another tenant's.
func TestTenantTaskVisibility(t *testing.T) {
	te := newTenancyEnv(t)
	_, _, bobs := te.submit("bob", "acme")
	_, _, anns := te.submit("ann", "acme")
	_, _, gils := te.submit("gil", "globex")
	list := func(who, query string) []int64 {
		var l List[TaskJSON]
		require.Equal(t, 200, te.call(http.MethodGet, "/api/v1/tasks"+query, te.tok[who], nil, &l))
		var ids []int64
		for _, it := range l.Items {
			ids = append(ids, it.ID)
		}
		return ids
	}
	require.ElementsMatch(t, []int64{bobs.ID, anns.ID}, list("ann", ""), "tenant admin: every task of the tenant")
	require.ElementsMatch(t, []int64{bobs.ID, anns.ID}, list("vic", ""), "tenant viewer: every task of the tenant")
	require.ElementsMatch(t, []int64{bobs.ID}, list("bob", ""), "member: own tasks")
	require.ElementsMatch(t, []int64{gils.ID}, list("gil", ""))
	te.tok["admin1"] = te.tokens[controlplane.RoleAdmin]
	require.Len(t, list("admin1", ""), 3)

	for _, who := range []string{"ann", "vic", "bob"} {
		st, _ := te.apiErr(http.MethodGet, "/api/v1/tasks/"+itoa(gils.ID), te.tok[who], nil)
		require.Equal(t, http.StatusNotFound, st, "%s sees globex's task", who)
	}
	st, _ := te.apiErr(http.MethodGet, "/api/v1/tasks/"+itoa(anns.ID), te.tok["bob"], nil)
	require.Equal(t, http.StatusNotFound, st, "a member does not see another member's task")
	st, er := te.apiErr(http.MethodGet, "/api/v1/tasks?tenant=globex", te.tok["ann"], nil)
	require.Equal(t, http.StatusForbidden, st)
	require.Equal(t, CodeTenantForbidden, er.Code)

	// Env: the tenant admin reads it, the tenant viewer does not.
	var got TaskJSON
	require.Equal(t, 200, te.call(http.MethodGet, "/api/v1/tasks/"+itoa(bobs.ID), te.tok["vic"], nil, &got))
	require.Equal(t, 200, te.call(http.MethodGet, "/api/v1/tasks/"+itoa(bobs.ID), te.tok["ann"], nil, &got))
}

// TestTenantManagement: cluster admins create, rename and disable
// tenants; tenant admins manage their own tenant's members and projects
// and nothing else; every change is audited.
func TestTenantManagement(t *testing.T) {
	te := newTenancyEnv(t)
	admin := te.tokens[controlplane.RoleAdmin]
	var tn TenantJSON
	require.Equal(t, 200, te.call(http.MethodPatch, "/api/v1/tenants/acme", admin, map[string]any{"display_name": "Acme 集团", "node_selector": map[string]string{"pool": "acme"}}, &tn))
	require.Equal(t, "Acme 集团", tn.DisplayName)
	require.Equal(t, "acme", tn.Name, "a rename keeps the name tasks and quotas use")
	st, er := te.apiErr(http.MethodPatch, "/api/v1/tenants/acme", te.tok["ann"], map[string]any{"disabled": true})
	require.Equal(t, 403, st, "tenant admins do not disable their tenant")
	require.Equal(t, "forbidden", er.Code)
	st, _ = te.apiErr(http.MethodPost, "/api/v1/tenants", te.tok["ann"], map[string]string{"name": "mine"})
	require.Equal(t, 403, st)
	st, er = te.apiErr(http.MethodPost, "/api/v1/tenants", admin, map[string]string{"name": "acme"})
	require.Equal(t, 409, st, er.Message)
	st, _ = te.apiErr(http.MethodPost, "/api/v1/tenants", admin, map[string]string{"name": "bad name"})
	require.Equal(t, 400, st)
	st, er = te.apiErr(http.MethodGet, "/api/v1/tenants/nowhere", admin, nil)
	require.Equal(t, 404, st)
	require.Equal(t, CodeTenantNotFound, er.Code)

	// ann manages acme's members; bob (member) and gil (other tenant) cannot.
	var m MemberJSON
	require.Equal(t, 200, te.call(http.MethodPut, "/api/v1/tenants/acme/members/gil", te.tok["ann"], map[string]string{"role": "viewer"}, &m))
	require.Equal(t, "viewer", m.Role)
	for _, who := range []string{"bob", "gil"} {
		st, er := te.apiErr(http.MethodPut, "/api/v1/tenants/acme/members/vic", te.tok[who], map[string]string{"role": "tenant-admin"})
		require.Equal(t, 403, st, who)
		require.Equal(t, CodeTenantForbidden, er.Code)
	}
	st, _ = te.apiErr(http.MethodPut, "/api/v1/tenants/globex/members/bob", te.tok["ann"], map[string]string{"role": "member"})
	require.Equal(t, 403, st, "ann is no admin of globex")
	st, _ = te.apiErr(http.MethodPut, "/api/v1/tenants/acme/members/ghost", te.tok["ann"], map[string]string{"role": "member"})
	require.Equal(t, 404, st)
	st, _ = te.apiErr(http.MethodPut, "/api/v1/tenants/acme/members/ann", te.tok["ann"], map[string]string{"role": "member"})
	require.Equal(t, 409, st, "a tenant admin cannot demote themselves")

	var members []MemberJSON
	require.Equal(t, 200, te.call(http.MethodGet, "/api/v1/tenants/acme/members", te.tok["vic"], nil, &members))
	require.Len(t, members, 4)
	st, _ = te.apiErr(http.MethodGet, "/api/v1/tenants/globex/members", te.tok["bob"], nil)
	require.Equal(t, 403, st)

	var tenants []TenantJSON
	require.Equal(t, 200, te.call(http.MethodGet, "/api/v1/tenants", te.tok["gil"], nil, &tenants))
	require.Len(t, tenants, 2, "gil belongs to globex and now acme")
	require.Equal(t, 200, te.call(http.MethodGet, "/api/v1/tenants", te.tok["bob"], nil, &tenants))
	require.Len(t, tenants, 1)
	require.Equal(t, "member", tenants[0].MyRole)

	actions := map[string]int{}
	for _, a := range te.audit("module=api") {
		actions[a.Action+" "+a.Result[:2]]++
	}
	require.Equal(t, 2, actions["tenant.create ok"])
	require.Equal(t, 1, actions["tenant.update ok"])
	require.GreaterOrEqual(t, actions["tenant.member.put de"], 3, "refused changes are audited as denied")
}

// TestSwitchTenant: a user in several tenants switches the current one;
// tasks without a tenant go there; a tenant it is not in is refused.
func TestSwitchTenant(t *testing.T) {
	te := newTenancyEnv(t)
	ts := te.store.(controlplane.TenantStore)
	_, err := ts.PutMember(context.Background(), "globex", te.ids["bob"], controlplane.TenantMemberRole)
	require.NoError(t, err)
	var my MyTenancyJSON
	require.Equal(t, 200, te.call(http.MethodGet, "/api/v1/auth/tenants", te.tok["bob"], nil, &my))
	require.Equal(t, "", my.Current)
	require.Len(t, my.Tenants, 2)
	require.Equal(t, 200, te.call(http.MethodPut, "/api/v1/auth/tenant", te.tok["bob"], map[string]string{"tenant": "globex"}, &my))
	require.Equal(t, "globex", my.Current)
	_, _, task := te.submit("bob", "")
	require.Equal(t, "globex", task.Tenant, "the switch applies to the next task, same token")
	require.Equal(t, 200, te.call(http.MethodPut, "/api/v1/auth/tenant", te.tok["bob"], map[string]string{"tenant": "acme"}, &my))
	_, _, task = te.submit("bob", "")
	require.Equal(t, "acme", task.Tenant)

	st, er := te.apiErr(http.MethodPut, "/api/v1/auth/tenant", te.tok["gil"], map[string]string{"tenant": "acme"})
	require.Equal(t, 403, st)
	require.Equal(t, CodeTenantForbidden, er.Code)
	st, er = te.apiErr(http.MethodPut, "/api/v1/auth/tenant", te.tok["gil"], map[string]string{"tenant": "nowhere"})
	require.Equal(t, 404, st)
	require.Equal(t, CodeTenantNotFound, er.Code)

	// Removed from the current tenant: a tenant-less submit is refused, not run outside it.
	require.Equal(t, http.StatusNoContent, te.call(http.MethodDelete, "/api/v1/tenants/acme/members/bob", te.tokens[controlplane.RoleAdmin], nil, nil))
	st, er, _ = te.submit("bob", "")
	require.Equal(t, 403, st)
	require.Equal(t, CodeTenantForbidden, er.Code)
}

// TestUsersTenantFieldAdopted: the users API's tenant field creates the
// tenant when missing and makes the user a member, as before tenants were
// objects.
func TestUsersTenantFieldAdopted(t *testing.T) {
	e := newEnv(t)
	admin := e.tokens[controlplane.RoleAdmin]
	var u UserJSON
	require.Equal(t, 201, e.call(http.MethodPost, "/api/v1/users", admin, map[string]string{"username": "leg", "password": testPassword, "role": "viewer", "tenant": "legacy"}, &u))
	ms, err := e.store.(controlplane.TenantStore).ListMemberships(context.Background(), u.ID)
	require.NoError(t, err)
	require.Len(t, ms, 1)
	require.Equal(t, "legacy", ms[0].Tenant)
	require.Equal(t, controlplane.TenantViewerRole, ms[0].Role)
}

// TestTenantScopedAPIKeys: a key minted in a tenant acts only there, with
// at most its owner's role there, and loses its reach when the owner
// leaves the tenant; creating and revoking are audited.
func TestTenantScopedAPIKeys(t *testing.T) {
	te := newTenancyEnv(t)
	ts := te.store.(controlplane.TenantStore)
	_, err := ts.PutMember(context.Background(), "globex", te.ids["bob"], controlplane.TenantMemberRole)
	require.NoError(t, err)
	var created CreatedAPIKeyJSON
	require.Equal(t, 201, te.call(http.MethodPost, "/api/v1/tenants/acme/apikeys", te.tok["bob"], map[string]string{"name": "ci"}, &created))
	require.Equal(t, "acme", created.Tenant)
	require.Equal(t, controlplane.RoleUser, created.Role)
	key := created.Key

	// Into acme by default; never into globex, where bob is also a member.
	var task TaskJSON
	require.Equal(t, 201, te.call(http.MethodPost, "/api/v1/tasks", key, map[string]any{"name": "k", "command": []string{"true"}}, &task))
	require.Equal(t, "acme", task.Tenant)
	st, er := te.apiErr(http.MethodPost, "/api/v1/tasks", key, map[string]any{"name": "k", "command": []string{"true"}, "tenant": "globex"})
	require.Equal(t, 403, st)
	require.Equal(t, CodeTenantForbidden, er.Code)
	_, _, inGlobex := te.submit("bob", "globex")
	st, _ = te.apiErr(http.MethodGet, "/api/v1/tasks/"+itoa(inGlobex.ID), key, nil)
	require.Equal(t, 404, st, "the key does not see its owner's tasks in other tenants")
	var l List[TaskJSON]
	require.Equal(t, 200, te.call(http.MethodGet, "/api/v1/tasks", key, nil, &l))
	require.Equal(t, 1, l.Total)
	st, _ = te.apiErr(http.MethodPut, "/api/v1/auth/tenant", key, map[string]string{"tenant": "globex"})
	require.Equal(t, 403, st)

	// A tenant viewer mints viewer keys only, and those submit nothing.
	st, er = te.apiErr(http.MethodPost, "/api/v1/tenants/acme/apikeys", te.tok["vic"], map[string]string{"name": "v", "role": "user"})
	require.Equal(t, 403, st)
	require.Equal(t, CodeTenantReadOnly, er.Code)
	var vk CreatedAPIKeyJSON
	require.Equal(t, 201, te.call(http.MethodPost, "/api/v1/tenants/acme/apikeys", te.tok["vic"], map[string]string{"name": "v", "role": "viewer"}, &vk))
	st, _ = te.apiErr(http.MethodPost, "/api/v1/tasks", vk.Key, map[string]any{"name": "k", "command": []string{"true"}})
	require.Equal(t, 403, st)
	// Outsiders mint none.
	st, er = te.apiErr(http.MethodPost, "/api/v1/tenants/acme/apikeys", te.tok["gil"], map[string]string{"name": "g"})
	require.Equal(t, 403, st)
	require.Equal(t, CodeTenantForbidden, er.Code)

	// Listing: the tenant admin sees both keys, bob his own.
	var keys List[APIKeyJSON]
	require.Equal(t, 200, te.call(http.MethodGet, "/api/v1/tenants/acme/apikeys", te.tok["ann"], nil, &keys))
	require.Equal(t, 2, keys.Total)
	require.Equal(t, 200, te.call(http.MethodGet, "/api/v1/tenants/acme/apikeys", te.tok["bob"], nil, &keys))
	require.Equal(t, 1, keys.Total)

	// Bob leaves acme: his key acts nowhere at once.
	require.Equal(t, http.StatusNoContent, te.call(http.MethodDelete, "/api/v1/tenants/acme/members/bob", te.tokens[controlplane.RoleAdmin], nil, nil))
	st, er = te.apiErr(http.MethodPost, "/api/v1/tasks", key, map[string]any{"name": "k", "command": []string{"true"}})
	require.Equal(t, 403, st)
	require.Equal(t, CodeTenantForbidden, er.Code)

	// The tenant admin revokes the viewer's key; it is refused afterwards.
	require.Equal(t, 204, te.call(http.MethodDelete, "/api/v1/tenants/acme/apikeys/"+itoa(vk.ID), te.tok["ann"], nil, nil))
	st, _ = te.apiErr(http.MethodGet, "/api/v1/tasks", vk.Key, nil)
	require.Equal(t, 401, st)
	st, _ = te.apiErr(http.MethodDelete, "/api/v1/tenants/globex/apikeys/"+itoa(created.ID), te.tok["gil"], nil)
	require.Equal(t, 404, st, "another tenant's member does not find the key")

	n := 0
	for _, a := range te.audit("module=api") {
		if (a.Action == "apikey.create" || a.Action == "apikey.revoke") && a.Result == "ok" {
			n++
		}
	}
	require.Equal(t, 3, n, "two creations and a revocation audited")
}
