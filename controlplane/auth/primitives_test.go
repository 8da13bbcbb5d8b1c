package auth

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
)

// cheap keeps argon2 fast in tests; the format and verification are the same.
var cheap = Argon2Params{Memory: 64, Time: 1, Threads: 1}

func TestPasswordHashRoundTrip(t *testing.T) {
	t.Parallel()
	h, err := HashPassword("Correct-Horse-9", cheap)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(h, "$argon2id$v=19$m=64,t=1,p=1$"))
	for _, tc := range []struct {
		pw   string
		want bool
	}{{"Correct-Horse-9", true}, {"correct-horse-9", false}, {"", false}} {
		ok, err := VerifyPassword(h, tc.pw)
		require.NoError(t, err)
		require.Equal(t, tc.want, ok, tc.pw)
	}
	h2, err := HashPassword("Correct-Horse-9", cheap)
	require.NoError(t, err)
	require.NotEqual(t, h, h2, "salt must differ")
	_, err = VerifyPassword("$2a$10$bcrypt", "x")
	require.Error(t, err)
}

func TestPasswordPolicy(t *testing.T) {
	t.Parallel()
	cases := []struct {
		pw, user, wantMsg string
	}{
		{"Short1!", "bob", "at least 10 characters"},
		{"alllowercaseletters", "bob", "mix at least 3"},
		{"lowerUPPERonly", "bob", "mix at least 3"},
		{"Bobby-Pass-99", "bobby", "must not contain the username"},
		{strings.Repeat("Aa1", 100), "bob", "at most 256"},
		{"Good-Pass-123", "bob", ""},
		{"密码Password12", "bob", ""},
	}
	for _, tc := range cases {
		t.Run(tc.pw, func(t *testing.T) {
			err := DefaultPolicy.Check(tc.pw, tc.user)
			if tc.wantMsg == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, controlplane.ErrInvalid)
			require.Contains(t, err.Error(), tc.wantMsg)
		})
	}
	gen, err := GeneratePassword()
	require.NoError(t, err)
	require.NoError(t, DefaultPolicy.Check(gen, "admin"))
}

func TestAccessTokenExpiry(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	ti, err := NewTokenIssuer([]byte(strings.Repeat("k", 32)), 15*time.Minute, clock)
	require.NoError(t, err)
	u := &controlplane.User{ID: 7, Username: "ann", Role: controlplane.RoleOperator, Tenant: "t1"}
	tok, exp, err := ti.Issue(u)
	require.NoError(t, err)
	require.Equal(t, now.Add(15*time.Minute), exp)

	c, err := ti.Verify(tok)
	require.NoError(t, err)
	id, err := c.UserID()
	require.NoError(t, err)
	require.Equal(t, int64(7), id)
	require.Equal(t, controlplane.RoleOperator, c.Role)

	now = now.Add(15*time.Minute + time.Second)
	_, err = ti.Verify(tok)
	require.ErrorIs(t, err, ErrTokenExpired)
	require.ErrorIs(t, err, controlplane.ErrUnauthenticated)

	other, err := NewTokenIssuer([]byte(strings.Repeat("x", 32)), time.Hour, clock)
	require.NoError(t, err)
	tok2, _, err := other.Issue(u)
	require.NoError(t, err)
	_, err = ti.Verify(tok2)
	require.ErrorIs(t, err, controlplane.ErrUnauthenticated, "foreign signature")

	// alg=none must be refused whatever its claims say.
	parts := strings.Split(tok2, ".")
	_, err = ti.Verify("eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0." + parts[1] + ".")
	require.ErrorIs(t, err, controlplane.ErrUnauthenticated)

	_, err = NewTokenIssuer([]byte("short"), time.Minute, clock)
	require.Error(t, err)
}

func TestAPIKeyFormat(t *testing.T) {
	t.Parallel()
	key, prefix, hash, err := NewAPIKey()
	require.NoError(t, err)
	require.True(t, LooksLikeAPIKey(key))
	p, secret, ok := ParseAPIKey(key)
	require.True(t, ok)
	require.Equal(t, prefix, p)
	require.True(t, secretMatches(secret, hash))
	require.False(t, secretMatches(secret+"x", hash))
	require.NotContains(t, hash, secret)
	for _, bad := range []string{"", "hf_", "hf_abc_def", "xx_0123456789ab_s", "hf_0123456789ab_"} {
		_, _, ok := ParseAPIKey(bad)
		require.False(t, ok, bad)
	}
}

func TestRateLimiter(t *testing.T) {
	t.Parallel()
	now := time.Unix(0, 0)
	l := NewRateLimiter(3, time.Minute, func() time.Time { return now })
	for i := 0; i < 3; i++ {
		ok, _ := l.Allow("1.2.3.4")
		require.True(t, ok)
	}
	ok, retry := l.Allow("1.2.3.4")
	require.False(t, ok)
	require.Equal(t, time.Minute, retry)
	ok, _ = l.Allow("5.6.7.8")
	require.True(t, ok, "other IPs are independent")
	now = now.Add(time.Minute)
	ok, _ = l.Allow("1.2.3.4")
	require.True(t, ok, "window reset")
	require.True(t, errors.Is(&RateLimitError{RetryAfter: time.Second}, ErrRateLimited))
}

func TestPermissionTable(t *testing.T) {
	t.Parallel()
	cases := []struct {
		role controlplane.Role
		res  Resource
		act  Action
		want bool
	}{
		{controlplane.RoleAdmin, ResUsers, ActWrite, true},
		{controlplane.RoleOperator, ResUsers, ActWrite, false},
		{controlplane.RoleViewer, ResTasks, ActRead, true},
		{controlplane.RoleViewer, ResTasks, ActWrite, false},
		{controlplane.RoleUser, ResTasks, ActCancel, true},
		{controlplane.RoleAgent, ResMetrics, ActWrite, true},
		{controlplane.RoleAgent, ResUsers, ActRead, false},
		{controlplane.RoleUser, ResAudit, ActRead, false},
		{controlplane.RoleAdmin, Resource("nope"), ActRead, false},
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, Allowed(tc.role, tc.res, tc.act), "%s %s:%s", tc.role, tc.res, tc.act)
	}
	// Every resource the later subsystems need has at least a read entry.
	for _, r := range []Resource{ResUsers, ResAPIKeys, ResTasks, ResAudit, ResSettings, ResNodes, ResMetrics,
		ResPlugins, ResQuotas, ResAlerts, ResBilling, ResClusters} {
		require.True(t, Known(r, ActRead), r)
	}
	// Admin can do everything in the table.
	for _, p := range SortedPermissions() {
		require.True(t, Allowed(controlplane.RoleAdmin, p.Resource, p.Action), "%v", p)
	}
}

func TestCanGrant(t *testing.T) {
	t.Parallel()
	require.True(t, CanGrant(controlplane.RoleAdmin, controlplane.RoleAgent))
	require.True(t, CanGrant(controlplane.RoleOperator, controlplane.RoleUser))
	require.True(t, CanGrant(controlplane.RoleOperator, controlplane.RoleOperator))
	require.False(t, CanGrant(controlplane.RoleOperator, controlplane.RoleAdmin))
	require.False(t, CanGrant(controlplane.RoleOperator, controlplane.RoleAgent))
	require.False(t, CanGrant(controlplane.RoleUser, controlplane.Role("root")))
	require.True(t, AtLeast(controlplane.RoleAdmin, controlplane.RoleOperator))
	require.False(t, AtLeast(controlplane.RoleAgent, controlplane.RoleViewer))
}

// TestVerifiedTokenCache: a token verified once is answered from memory
// until it expires, and only a byte-identical token hits: one whose
// payload or signature differs is verified and refused.
func TestVerifiedTokenCache(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	ti, err := NewTokenIssuer([]byte(strings.Repeat("k", 32)), 15*time.Minute, clock)
	require.NoError(t, err)
	tok, _, err := ti.Issue(&controlplane.User{ID: 7, Username: "ann", Role: controlplane.RoleUser})
	require.NoError(t, err)
	c, err := ti.Verify(tok)
	require.NoError(t, err)
	c.Role = controlplane.RoleAdmin // a caller's change stays its own
	again, err := ti.Verify(tok)
	require.NoError(t, err)
	require.Equal(t, controlplane.RoleUser, again.Role)

	parts := strings.Split(tok, ".")
	sig := []byte(parts[2])
	sig[len(sig)/2] ^= 1
	_, err = ti.Verify(parts[0] + "." + parts[1] + "." + string(sig))
	require.ErrorIs(t, err, controlplane.ErrUnauthenticated, "a changed signature")
	forged, err := NewTokenIssuer([]byte(strings.Repeat("x", 32)), time.Hour, clock)
	require.NoError(t, err)
	adminTok, _, err := forged.Issue(&controlplane.User{ID: 7, Username: "ann", Role: controlplane.RoleAdmin})
	require.NoError(t, err)
	_, err = ti.Verify(strings.Join([]string{parts[0], strings.Split(adminTok, ".")[1], parts[2]}, "."))
	require.ErrorIs(t, err, controlplane.ErrUnauthenticated, "another payload under the verified token's signature")

	now = now.Add(15 * time.Minute)
	_, err = ti.Verify(tok)
	require.ErrorIs(t, err, ErrTokenExpired, "remembered until its expiry, not after")
}
