package server

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane/apitypes"
	"github.com/heteroflow/heteroflow/controlplane/client"
	"github.com/heteroflow/heteroflow/controlplane/postgres/pgtest"
)

// TestHARevocationReachesEveryServer: an API key revoked on server A is
// refused by server B although B had the key cached (its cache would
// otherwise trust it for APIKeyCacheTTL, 30 s): the revocation returns
// once A has heard its own notification back, B's listener gets the same
// notification at that moment, so B refuses the key on its next request
// unless that request beats B's listener goroutine (milliseconds) — the
// test allows 1 s and logs how many rounds were refused at once. The same
// for a user an admin disables on A.
func TestHARevocationReachesEveryServer(t *testing.T) {
	dsn := pgtest.Schema(t)
	env := map[string]string{EnvSecretKey: newSecretKey(t), EnvAdminPassword: "Ha-Test-Password-9x"}
	getenv := func(k string) string { return env[k] }
	var srvs [2]*Server
	for i := range srvs {
		s, err := New(t.Context(), haConfig(t, dsn), Options{Logger: slog.New(slog.DiscardHandler), Getenv: getenv, Version: "ha"})
		require.NoError(t, err)
		require.NoError(t, s.Start())
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			require.NoError(t, s.Shutdown(ctx))
		})
		srvs[i] = s
	}
	a, err := client.New("http://"+srvs[0].APIAddr(), nil)
	require.NoError(t, err)
	_, err = a.Login(t.Context(), BootstrapAdmin, env[EnvAdminPassword])
	require.NoError(t, err)

	newKey := func(name string) apitypes.CreatedAPIKeyJSON {
		var k apitypes.CreatedAPIKeyJSON
		require.NoError(t, a.Do(t.Context(), http.MethodPost, "/api/v1/apikeys", map[string]any{"name": name, "role": "operator"}, &k))
		return k
	}
	onB := func(key string) error {
		b, err := client.New("http://"+srvs[1].APIAddr(), nil)
		require.NoError(t, err)
		_, err = b.WithAPIKey(key).ListTasks(t.Context(), url.Values{"limit": {"1"}})
		return err
	}
	refused := func(err error) bool {
		var ae *client.Error
		return errors.As(err, &ae) && ae.Status == http.StatusUnauthorized
	}

	const rounds = 10
	atOnce := 0
	for round := range rounds {
		k := newKey("rev-" + strconv.Itoa(round))
		require.NoError(t, onB(k.Key), "B accepts the key (and caches it)")
		require.NoError(t, onB(k.Key), "from its cache")
		revoked := time.Now()
		require.NoError(t, a.Do(t.Context(), http.MethodDelete, "/api/v1/apikeys/"+strconv.FormatInt(k.ID, 10), nil, nil))
		if refused(onB(k.Key)) {
			atOnce++
			continue
		}
		require.Eventually(t, func() bool { return refused(onB(k.Key)) }, time.Second, time.Millisecond,
			"round %d: B still accepts the key revoked on A", round)
		t.Logf("round %d: refused by B %v after the revocation was sent", round, time.Since(revoked))
	}
	t.Logf("%d of %d revocations refused by B on its next request", atOnce, rounds)
	require.Positive(t, atOnce)

	// A user disabled on A: B drops the keys it holds of theirs.
	var u struct{ ID int64 }
	require.NoError(t, a.Do(t.Context(), http.MethodPost, "/api/v1/users",
		map[string]any{"username": "ops1", "password": "Ops-Password-42x", "role": "operator"}, &u))
	var opsKey apitypes.CreatedAPIKeyJSON
	ops, err := client.New("http://"+srvs[0].APIAddr(), nil)
	require.NoError(t, err)
	_, err = ops.Login(t.Context(), "ops1", "Ops-Password-42x")
	require.NoError(t, err)
	require.NoError(t, ops.Do(t.Context(), http.MethodPost, "/api/v1/apikeys", map[string]any{"name": "ops", "role": "operator"}, &opsKey))
	require.NoError(t, onB(opsKey.Key))
	require.NoError(t, a.Do(t.Context(), http.MethodPatch, "/api/v1/users/"+strconv.FormatInt(u.ID, 10),
		map[string]any{"status": "disabled"}, nil))
	require.Eventually(t, func() bool { return refused(onB(opsKey.Key)) }, 2*time.Second, 10*time.Millisecond,
		"B refuses the disabled user's key")
}
