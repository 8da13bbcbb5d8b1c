package httpapi

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
)

// TestAPIKeyFollowsOwnerRole: a key acts with at most its owner's current
// role, and a change to the owner applies to the very next request, not
// after the key cache expires.
func TestAPIKeyFollowsOwnerRole(t *testing.T) {
	e := newEnv(t)
	admin := e.tokens[controlplane.RoleAdmin]
	op := e.createUser(e.unique("op"), controlplane.RoleOperator)
	opTok := e.login(op.Username, testPassword)
	var created struct {
		Key string `json:"key"`
	}
	require.Equal(t, http.StatusCreated, e.call(http.MethodPost, "/api/v1/apikeys", opTok,
		map[string]string{"name": "ops", "role": "operator"}, &created))
	key := created.Key
	require.NotEmpty(t, key)
	// Warm the cache: the key reads the audit log as an operator.
	require.Equal(t, http.StatusOK, e.call(http.MethodGet, "/api/v1/audit", key, nil, nil))

	// Demote the owner to user: the key now acts as a user at once.
	require.Equal(t, http.StatusOK, e.call(http.MethodPatch, fmt.Sprintf("/api/v1/users/%d", op.ID), admin,
		map[string]string{"role": "user"}, nil))
	st, _ := e.apiErr(http.MethodGet, "/api/v1/audit", key, nil)
	require.Equal(t, http.StatusForbidden, st, "a demoted owner's key must not read the audit log")
	st, _ = e.apiErr(http.MethodPost, "/api/v1/apikeys", key, map[string]string{"name": "again", "role": "operator"})
	require.Equal(t, http.StatusForbidden, st, "a demoted owner's key must not mint operator keys")
	require.Equal(t, http.StatusOK, e.call(http.MethodGet, "/api/v1/tasks", key, nil, nil), "still a user")

	// Promote back: the key never exceeds its own role (operator).
	require.Equal(t, http.StatusOK, e.call(http.MethodPatch, fmt.Sprintf("/api/v1/users/%d", op.ID), admin,
		map[string]string{"role": "admin"}, nil))
	require.Equal(t, http.StatusOK, e.call(http.MethodGet, "/api/v1/audit", key, nil, nil))
	st, _ = e.apiErr(http.MethodGet, "/api/v1/users", key, nil)
	require.Equal(t, http.StatusForbidden, st, "an operator key of an admin is still an operator key")

	// Disable the owner: the key stops working on the next request.
	require.Equal(t, http.StatusOK, e.call(http.MethodPatch, fmt.Sprintf("/api/v1/users/%d", op.ID), admin,
		map[string]string{"status": "disabled"}, nil))
	st, _ = e.apiErr(http.MethodGet, "/api/v1/auth/me", key, nil)
	require.Equal(t, http.StatusUnauthorized, st)
	require.Equal(t, http.StatusOK, e.call(http.MethodPatch, fmt.Sprintf("/api/v1/users/%d", op.ID), admin,
		map[string]string{"status": "active"}, nil))
	require.Equal(t, http.StatusOK, e.call(http.MethodGet, "/api/v1/auth/me", key, nil, nil))

	// Delete the owner: likewise.
	require.Equal(t, http.StatusNoContent, e.call(http.MethodDelete, fmt.Sprintf("/api/v1/users/%d", op.ID), admin, nil, nil))
	st, _ = e.apiErr(http.MethodGet, "/api/v1/auth/me", key, nil)
	require.Equal(t, http.StatusUnauthorized, st)
}

// TestMeWithAPIKeyIsTheKeysRole: /auth/me through an API key answers the
// role the key acts with, not its owner's.
func TestMeWithAPIKeyIsTheKeysRole(t *testing.T) {
	e := newEnv(t)
	admin := e.tokens[controlplane.RoleAdmin]
	var created struct {
		Key string `json:"key"`
	}
	require.Equal(t, http.StatusCreated, e.call(http.MethodPost, "/api/v1/apikeys", admin,
		map[string]string{"name": "grafana", "role": "viewer"}, &created))
	var me UserJSON
	require.Equal(t, http.StatusOK, e.call(http.MethodGet, "/api/v1/auth/me", created.Key, nil, &me))
	require.Equal(t, controlplane.RoleViewer, me.Role)
	require.Equal(t, http.StatusOK, e.call(http.MethodGet, "/api/v1/auth/me", admin, nil, &me))
	require.Equal(t, controlplane.RoleAdmin, me.Role, "a session is its user")
}

// TestXAPIKeyHeaderIsJudgedAsAKey: a value in X-API-Key that is not a
// valid key is refused as an invalid API key (it was judged as an access
// token, and the answer said so).
func TestXAPIKeyHeaderIsJudgedAsAKey(t *testing.T) {
	e := newEnv(t)
	for _, bad := range []string{"not-a-key", "hf_abcdefgh_" + strings.Repeat("x", 32)} {
		res := e.raw(http.MethodGet, "/api/v1/tasks", "", nil, "X-API-Key", bad)
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusUnauthorized, res.StatusCode)
		require.Contains(t, string(b), "invalid API key", bad)
	}
}
