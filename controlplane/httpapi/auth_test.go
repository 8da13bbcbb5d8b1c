package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
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

const badLoginMessage = "unauthenticated: invalid username or password, or the account is temporarily locked"

// TestLockout: failures from many addresses lock the account with the same
// answer as a wrong password; each lockout lasts twice as long as the one
// before; an administrator lifts it at once.
func TestLockout(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	u := e.createUser("locky", controlplane.RoleUser)
	max := auth.DefaultLockout.MaxFailures
	seq := 0
	fail := func() error { // each failure from a new address: no per-address backoff
		seq++
		_, err := e.auth.Login(ctx, "locky", "wrong-Password-1", fmt.Sprintf("10.1.%d.%d", seq/200, seq%200))
		return err
	}
	good := func(ip string) error { _, err := e.auth.Login(ctx, "locky", testPassword, ip); return err }

	// Concurrent failures are all counted.
	var wg sync.WaitGroup
	for range max - 1 {
		wg.Add(1)
		go func() { defer wg.Done(); assert.ErrorIs(t, fail(), controlplane.ErrUnauthenticated) }()
	}
	wg.Wait()
	got, err := e.store.GetUser(ctx, u.ID)
	require.NoError(t, err)
	require.Equal(t, max-1, got.FailedLogins, "no failed login may be lost")

	// The next failure locks; the answer is the same as for a wrong password.
	err = fail()
	require.EqualError(t, err, badLoginMessage)
	require.EqualError(t, good("10.2.0.1"), badLoginMessage, "even the right password is refused while locked")
	_, er := e.apiErr(http.MethodPost, "/api/v1/auth/login", "", map[string]string{"username": "nobody", "password": "x"})
	require.Equal(t, badLoginMessage, er.Message, "unknown users get the same answer")
	st, er := e.apiErr(http.MethodPost, "/api/v1/auth/login", "", map[string]string{"username": "locky", "password": testPassword})
	require.Equal(t, http.StatusUnauthorized, st)
	require.Equal(t, badLoginMessage, er.Message)

	// First lockout: Duration. The next, without a good login between
	// them, twice as long.
	e.clock.Advance(auth.DefaultLockout.Duration)
	for range max {
		require.Error(t, fail())
	}
	e.clock.Advance(auth.DefaultLockout.Duration)
	require.Error(t, good("10.2.0.3"), "the second lockout lasts longer")
	e.clock.Advance(auth.DefaultLockout.Duration)
	require.NoError(t, good("10.2.0.4"))

	// An administrator lifts a lock at once.
	for range max {
		require.Error(t, fail())
	}
	require.Error(t, good("10.2.0.5"))
	var uj UserJSON
	admin, _, err := e.auth.Tokens().Issue(e.users[controlplane.RoleAdmin]) // the clock moved past the login token
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, e.call(http.MethodPost, fmt.Sprintf("/api/v1/users/%d/unlock", u.ID), admin, nil, &uj))
	require.Nil(t, uj.LockedUntil)
	require.NoError(t, good("10.2.0.6"))
	unlocks := 0
	for _, a := range e.audit("module=api") {
		if a.Action == "user.unlock" && a.Target == fmt.Sprintf("user/%d", u.ID) {
			unlocks++
		}
	}
	require.Equal(t, 1, unlocks, "the unlock is audited")
}

// TestLockoutSparesKnownAddresses: locking an account from elsewhere does
// not lock out its owner at an address they logged in from recently.
func TestLockoutSparesKnownAddresses(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	_, err := e.auth.Login(ctx, "admin1", testPassword, "192.0.2.10")
	require.NoError(t, err)
	for i := range auth.DefaultLockout.MaxFailures {
		_, err := e.auth.Login(ctx, "admin1", "guess-Password-1", fmt.Sprintf("198.51.100.%d", i))
		require.EqualError(t, err, badLoginMessage)
	}
	_, err = e.auth.Login(ctx, "admin1", testPassword, "203.0.113.7")
	require.EqualError(t, err, badLoginMessage, "locked for a new address")
	_, err = e.auth.Login(ctx, "admin1", testPassword, "192.0.2.10")
	require.NoError(t, err, "the owner's recent address still gets in")
}

// TestLoginBackoffPerAddress: one address that keeps failing waits longer
// and longer (429 with Retry-After) long before any account locks, and
// other addresses are not slowed.
func TestLoginBackoffPerAddress(t *testing.T) {
	e := newEnv(t)
	bad := map[string]string{"username": "user1", "password": "wrong-Password-1"}
	for range auth.DefaultLockout.IPFreeFailures {
		st, _ := e.apiErr(http.MethodPost, "/api/v1/auth/login", "", bad)
		require.Equal(t, http.StatusUnauthorized, st)
	}
	st, _ := e.apiErr(http.MethodPost, "/api/v1/auth/login", "", bad)
	require.Equal(t, http.StatusUnauthorized, st, "the failure past the free ones starts the backoff")
	res := e.raw(http.MethodPost, "/api/v1/auth/login", "", bad)
	res.Body.Close()
	require.Equal(t, http.StatusTooManyRequests, res.StatusCode)
	require.Equal(t, "1", res.Header.Get("Retry-After"))
	e.clock.Advance(time.Second)
	st, _ = e.apiErr(http.MethodPost, "/api/v1/auth/login", "", bad)
	require.Equal(t, http.StatusUnauthorized, st)
	res = e.raw(http.MethodPost, "/api/v1/auth/login", "", bad)
	res.Body.Close()
	require.Equal(t, http.StatusTooManyRequests, res.StatusCode)
	require.Equal(t, "2", res.Header.Get("Retry-After"), "the wait doubles")
	// Another address is not slowed, and the account is not locked.
	_, err := e.auth.Login(context.Background(), "user1", testPassword, "10.9.9.9")
	require.NoError(t, err)
	u, err := e.store.GetUser(context.Background(), e.users[controlplane.RoleUser].ID)
	require.NoError(t, err)
	require.Nil(t, u.LockedUntil)
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
