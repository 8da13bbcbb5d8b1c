package httpapi

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
)

// TestAccountChangesApplyAtOnce: each request's account (cluster role,
// memberships, status, current tenant) comes from the auth service's short cache, yet
// every change made through the API applies to the very next request of
// the user it concerns. The env's clock stands still, so no cached entry
// expires by itself: only the invalidation can make these pass.
func TestAccountChangesApplyAtOnce(t *testing.T) {
	te := newTenancyEnv(t)
	admin := te.tokens[controlplane.RoleAdmin]
	refused := func(who, tenant string, status int, code string) {
		t.Helper()
		st, er, _ := te.submit(who, tenant)
		require.Equal(t, status, st, "%s submitting into %q", who, tenant)
		require.Equal(t, code, er.Code)
	}
	accepted := func(who, tenant string) {
		t.Helper()
		st, er, _ := te.submit(who, tenant)
		require.Equal(t, http.StatusCreated, st, "%s submitting into %q: %+v", who, tenant, er)
	}

	// A removed member loses the tenant at once.
	accepted("bob", "acme")
	require.Equal(t, http.StatusNoContent, te.call(http.MethodDelete, "/api/v1/tenants/acme/members/bob", admin, nil, nil))
	refused("bob", "acme", http.StatusForbidden, CodeTenantForbidden)

	// A role change applies at once, both ways.
	refused("vic", "acme", http.StatusForbidden, CodeTenantReadOnly)
	require.Equal(t, http.StatusOK, te.call(http.MethodPut, "/api/v1/tenants/acme/members/vic", admin, map[string]string{"role": "member"}, nil))
	accepted("vic", "acme")
	require.Equal(t, http.StatusOK, te.call(http.MethodPut, "/api/v1/tenants/acme/members/vic", admin, map[string]string{"role": "viewer"}, nil))
	refused("vic", "acme", http.StatusForbidden, CodeTenantReadOnly)

	// The current tenant an admin sets is the next tenant-less task's.
	accepted("gil", "")
	require.Equal(t, http.StatusCreated, te.call(http.MethodPost, "/api/v1/tenants", admin, map[string]string{"name": "initech"}, nil))
	require.Equal(t, http.StatusOK, te.call(http.MethodPatch, "/api/v1/users/"+itoa(te.ids["gil"]), admin, map[string]string{"tenant": "initech"}, nil))
	_, _, task := te.submit("gil", "")
	require.Equal(t, "initech", task.Tenant)

	// A disabled tenant drops out of its members' tenants at once.
	require.Equal(t, http.StatusOK, te.call(http.MethodGet, "/api/v1/tasks?tenant=globex", te.tok["gil"], nil, nil))
	require.Equal(t, http.StatusOK, te.call(http.MethodPatch, "/api/v1/tenants/globex", admin, map[string]any{"disabled": true}, nil))
	st, er := te.apiErr(http.MethodGet, "/api/v1/tasks?tenant=globex", te.tok["gil"], nil)
	require.Equal(t, http.StatusForbidden, st)
	require.Equal(t, CodeTenantForbidden, er.Code)

	// A disabled account's access token stops working at once; enabled
	// again, it works again.
	require.Equal(t, http.StatusOK, te.call(http.MethodGet, "/api/v1/tasks", te.tok["gil"], nil, nil))
	require.Equal(t, http.StatusOK, te.call(http.MethodPatch, "/api/v1/users/"+itoa(te.ids["gil"]), admin, map[string]string{"status": "disabled"}, nil))
	require.Equal(t, http.StatusUnauthorized, te.call(http.MethodGet, "/api/v1/tasks", te.tok["gil"], nil, nil))
	require.Equal(t, http.StatusOK, te.call(http.MethodPatch, "/api/v1/users/"+itoa(te.ids["gil"]), admin, map[string]string{"status": "active"}, nil))
	require.Equal(t, http.StatusOK, te.call(http.MethodGet, "/api/v1/tasks", te.tok["gil"], nil, nil))

	// A cluster role change applies to the next request of an access
	// token issued before it, both ways.
	ada := te.createUser("ada", controlplane.RoleAdmin)
	adaTok := te.login("ada", testPassword)
	require.Equal(t, http.StatusOK, te.call(http.MethodGet, "/api/v1/users", adaTok, nil, nil))
	require.Equal(t, http.StatusOK, te.call(http.MethodPatch, "/api/v1/users/"+itoa(ada.ID), admin, map[string]string{"role": "viewer"}, nil))
	require.Equal(t, http.StatusForbidden, te.call(http.MethodGet, "/api/v1/users", adaTok, nil, nil))
	require.Equal(t, http.StatusOK, te.call(http.MethodPatch, "/api/v1/users/"+itoa(ada.ID), admin, map[string]string{"role": "admin"}, nil))
	require.Equal(t, http.StatusOK, te.call(http.MethodGet, "/api/v1/users", adaTok, nil, nil))

	// So does a deleted account's.
	require.Equal(t, http.StatusOK, te.call(http.MethodGet, "/api/v1/tasks", te.tok["vic"], nil, nil))
	require.Equal(t, http.StatusNoContent, te.call(http.MethodDelete, "/api/v1/users/"+itoa(te.ids["vic"]), admin, nil, nil))
	require.Equal(t, http.StatusUnauthorized, te.call(http.MethodGet, "/api/v1/tasks", te.tok["vic"], nil, nil))
}

// TestAccountCacheBound: a change no request of this server made (another
// server with its change feed down, a program writing the store) applies
// within the cache's bound of one second.
func TestAccountCacheBound(t *testing.T) {
	te := newTenancyEnv(t)
	accepted := func() int {
		st, _, _ := te.submit("bob", "acme")
		return st
	}
	require.Equal(t, http.StatusCreated, accepted())
	require.NoError(t, te.store.(controlplane.TenantStore).RemoveMember(t.Context(), "acme", te.ids["bob"]))
	te.clock.Advance(time.Second)
	require.Equal(t, http.StatusForbidden, accepted())
}
