package httpapi

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/auth"
)

func TestAccessTokenExpiry(t *testing.T) {
	e := newEnv(t)
	tok := e.tokens[controlplane.RoleUser]
	require.Equal(t, http.StatusOK, e.call(http.MethodGet, "/api/v1/auth/me", tok, nil, nil))
	e.clock.Advance(15*time.Minute + time.Second)
	st, er := e.apiErr(http.MethodGet, "/api/v1/auth/me", tok, nil)
	require.Equal(t, http.StatusUnauthorized, st)
	require.Equal(t, "unauthenticated", er.Code)
	require.Contains(t, er.Message, "expired")
}

func TestRefreshRotationAndReuse(t *testing.T) {
	e := newEnv(t)
	var s1, s2, s3 SessionJSON
	require.Equal(t, http.StatusOK, e.call(http.MethodPost, "/api/v1/auth/login", "",
		map[string]string{"username": "user1", "password": testPassword}, &s1))
	require.Equal(t, "Bearer", s1.TokenType)
	require.Equal(t, 900, s1.ExpiresIn)

	// Rotation: a new refresh token, and a working access token.
	require.Equal(t, http.StatusOK, e.call(http.MethodPost, "/api/v1/auth/refresh", "", map[string]string{"refresh_token": s1.RefreshToken}, &s2))
	require.NotEqual(t, s1.RefreshToken, s2.RefreshToken)
	require.Equal(t, http.StatusOK, e.call(http.MethodGet, "/api/v1/auth/me", s2.AccessToken, nil, nil))

	// Reuse of the rotated token revokes the family: s2's refresh token dies too.
	st, er := e.apiErr(http.MethodPost, "/api/v1/auth/refresh", "", map[string]string{"refresh_token": s1.RefreshToken})
	require.Equal(t, http.StatusUnauthorized, st)
	require.Contains(t, er.Message, "reuse")
	st, _ = e.apiErr(http.MethodPost, "/api/v1/auth/refresh", "", map[string]string{"refresh_token": s2.RefreshToken})
	require.Equal(t, http.StatusUnauthorized, st)

	// Another login's family is unaffected; logout kills it.
	require.Equal(t, http.StatusOK, e.call(http.MethodPost, "/api/v1/auth/login", "",
		map[string]string{"username": "user1", "password": testPassword}, &s3))
	require.Equal(t, http.StatusNoContent, e.call(http.MethodPost, "/api/v1/auth/logout", s3.AccessToken, map[string]string{"refresh_token": s3.RefreshToken}, nil))
	st, _ = e.apiErr(http.MethodPost, "/api/v1/auth/refresh", "", map[string]string{"refresh_token": s3.RefreshToken})
	require.Equal(t, http.StatusUnauthorized, st)

	// Refresh tokens expire too.
	var s4 SessionJSON
	require.Equal(t, http.StatusOK, e.call(http.MethodPost, "/api/v1/auth/login", "",
		map[string]string{"username": "user1", "password": testPassword}, &s4))
	e.clock.Advance(7*24*time.Hour + time.Second)
	st, _ = e.apiErr(http.MethodPost, "/api/v1/auth/refresh", "", map[string]string{"refresh_token": s4.RefreshToken})
	require.Equal(t, http.StatusUnauthorized, st)

	// Every auth event is audited in module auth, with the source IP.
	var refreshes, reuse int
	for _, a := range e.audit("module=auth") {
		require.NotEmpty(t, a.SourceIP)
		if a.Action == "auth.refresh" {
			refreshes++
			if a.Result != "ok" {
				require.Equal(t, controlplane.LevelWarn, a.Level)
				reuse++
			}
		}
	}
	require.Equal(t, 5, refreshes)
	require.Equal(t, 4, reuse)
}

func TestLockout(t *testing.T) {
	e := newEnv(t)
	bad := map[string]string{"username": "user1", "password": "wrong-Password-1"}
	for i := 1; i < auth.DefaultLockout.MaxFailures; i++ {
		st, er := e.apiErr(http.MethodPost, "/api/v1/auth/login", "", bad)
		require.Equal(t, http.StatusUnauthorized, st)
		require.Equal(t, "unauthenticated: invalid username or password", er.Message)
	}
	st, er := e.apiErr(http.MethodPost, "/api/v1/auth/login", "", bad)
	require.Equal(t, http.StatusLocked, st)
	require.Equal(t, "locked", er.Code)
	// Even the right password is refused while locked.
	good := map[string]string{"username": "user1", "password": testPassword}
	st, _ = e.apiErr(http.MethodPost, "/api/v1/auth/login", "", good)
	require.Equal(t, http.StatusLocked, st)
	e.clock.Advance(auth.DefaultLockout.Duration)
	require.Equal(t, http.StatusOK, e.call(http.MethodPost, "/api/v1/auth/login", "", good, nil))
	// Unknown users get the same answer as wrong passwords (no enumeration).
	_, er = e.apiErr(http.MethodPost, "/api/v1/auth/login", "", map[string]string{"username": "nobody", "password": "x"})
	require.Equal(t, "unauthenticated: invalid username or password", er.Message)

	failed := 0
	for _, a := range e.audit("module=auth&actor=user1") {
		if a.Action == "auth.login" && a.Result != "ok" {
			failed++
		}
	}
	require.Equal(t, auth.DefaultLockout.MaxFailures+1, failed)
}

func TestLoginRateLimit(t *testing.T) {
	e := newEnv(t, func(c *auth.Config, _ *Options) { c.LoginLimit = 20 })
	// newEnv logged in 4 users from this IP already.
	for i := 0; i < 16; i++ {
		require.Equal(t, http.StatusOK, e.call(http.MethodPost, "/api/v1/auth/login", "",
			map[string]string{"username": "viewer1", "password": testPassword}, nil))
	}
	res := e.raw(http.MethodPost, "/api/v1/auth/login", "", map[string]string{"username": "viewer1", "password": testPassword})
	res.Body.Close()
	require.Equal(t, http.StatusTooManyRequests, res.StatusCode)
	require.NotEmpty(t, res.Header.Get("Retry-After"))
	e.clock.Advance(time.Minute)
	require.Equal(t, http.StatusOK, e.call(http.MethodPost, "/api/v1/auth/login", "",
		map[string]string{"username": "viewer1", "password": testPassword}, nil))
}

func TestAPIKeys(t *testing.T) {
	e := newEnv(t)
	op := e.tokens[controlplane.RoleOperator]
	var k CreatedAPIKeyJSON
	require.Equal(t, http.StatusCreated, e.call(http.MethodPost, "/api/v1/apikeys", op, map[string]string{"name": "ci", "role": "user"}, &k))
	require.Regexp(t, `^hf_[0-9a-f]{12}_.+`, k.Key)

	// Both header forms authenticate, with the key's role.
	var me UserJSON
	require.Equal(t, http.StatusOK, e.call(http.MethodGet, "/api/v1/auth/me", k.Key, nil, &me))
	require.Equal(t, "operator1", me.Username)
	res := e.raw(http.MethodGet, "/api/v1/tasks", "", nil, "X-API-Key", k.Key)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	st, _ := e.apiErr(http.MethodGet, "/api/v1/audit", k.Key, nil)
	require.Equal(t, http.StatusForbidden, st, "a user-role key cannot read the audit log even though its owner can")

	// No escalation: an operator cannot mint admin or agent keys.
	for _, role := range []string{"admin", "agent"} {
		st, er := e.apiErr(http.MethodPost, "/api/v1/apikeys", op, map[string]string{"name": "x", "role": role})
		require.Equal(t, http.StatusForbidden, st, er.Message)
	}

	// Keys are listed without secrets; operators see their own only.
	var l List[APIKeyJSON]
	require.Equal(t, http.StatusOK, e.call(http.MethodGet, "/api/v1/apikeys", op, nil, &l))
	require.Equal(t, 1, l.Total)
	require.Equal(t, k.Prefix, l.Items[0].Prefix)

	require.Equal(t, http.StatusNoContent, e.call(http.MethodDelete, "/api/v1/apikeys/"+itoa(k.ID), op, nil, nil))
	st, _ = e.apiErr(http.MethodGet, "/api/v1/auth/me", k.Key, nil)
	require.Equal(t, http.StatusUnauthorized, st, "revoked key")
	wrong := k.Key[:len(k.Key)-2] + "xx"
	st, _ = e.apiErr(http.MethodGet, "/api/v1/auth/me", wrong, nil)
	require.Equal(t, http.StatusUnauthorized, st)

	var ok, failed int
	for _, a := range e.audit("module=auth&actor=apikey:" + k.Prefix) {
		require.Equal(t, "auth.apikey", a.Action)
		if a.Result == "ok" {
			ok++
		} else {
			failed++
		}
	}
	require.Equal(t, 1, ok, "first use audited once per cache period")
	require.Equal(t, 2, failed)
}
