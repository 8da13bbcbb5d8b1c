package app

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane/apitypes"
	"github.com/heteroflow/heteroflow/controlplane/metricstore"
	"github.com/heteroflow/heteroflow/controlplane/postgres/pgtest"
	"github.com/heteroflow/heteroflow/controlplane/server"
)

// TestHubTwoServers runs a hub as two servers on one PostgreSQL (HA): a
// member registered through one is listed and used by the other (its key
// unsealed with the shared HA key), a task placed through one is followed
// through both, a keyed submission retried through the other server is
// answered with the first one's task, exactly one of them polls the members, and when that one
// stops the other takes the poll over: it sees the member go away.
func TestHubTwoServers(t *testing.T) {
	dsn := pgtest.Schema(t)
	secret := make([]byte, 32)
	_, err := rand.Read(secret)
	require.NoError(t, err)
	keyFile := filepath.Join(t.TempDir(), "ha.key")
	require.NoError(t, os.WriteFile(keyFile, []byte(base64.StdEncoding.EncodeToString(secret)), 0o600))
	// A metrics sink that accepts every write: HA keeps metrics in a shared
	// remote store, and this test is about the hub.
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(sink.Close)
	const leaseTTL = 1500 * time.Millisecond
	hubCfg := func(c *server.Config) {
		c.DB, c.HA.Enabled, c.HA.SecretKeyFile, c.HA.LeaseTTL = dsn, true, keyFile, server.Duration(leaseTTL)
		c.Metrics.Mode, c.Metrics.Remote.QueryURL, c.Metrics.Remote.WriteURL = metricstore.ModeRemote, sink.URL, sink.URL+"/api/v1/write"
		c.Hub.Enabled, c.Hub.PollInterval, c.Hub.Timeout = true, server.Duration(time.Second), server.Duration(2*time.Second)
	}
	hubs := []*testServer{startServerVersion(t, t.TempDir(), "1.4.2", hubCfg), startServerVersion(t, t.TempDir(), "1.4.2", hubCfg)}
	admin := hubs[0].adminToken() // signed with the shared key: good on both
	east := startMember(t, "1.4.0")
	east.heartbeat(t)

	hubs[0].ok(http.StatusCreated, http.MethodPost, "/api/v1/clusters", admin,
		map[string]string{"name": "east", "url": east.s.base, "api_key": east.key}, nil)
	var list apitypes.List[apitypes.ClusterJSON]
	hubs[1].ok(http.StatusOK, http.MethodGet, "/api/v1/clusters", admin, nil, &list)
	require.Len(t, list.Items, 1, "the other hub server lists the member")
	require.Equal(t, "reachable", list.Items[0].Status)
	require.NotContains(t, fmt.Sprint(list), east.key)

	// Placed through the second server, which unseals the member's key.
	var ht apitypes.HubTaskJSON
	hubs[1].ok(http.StatusCreated, http.MethodPost, "/api/v1/hub/tasks", admin, map[string]any{
		"task": map[string]any{"name": "ha-hop", "command": []string{"true"}, "device_count": 1, "compute_percent": 100}}, &ht)
	require.Equal(t, "east", ht.Cluster)
	var onMember apitypes.TaskJSON
	east.s.ok(http.StatusOK, http.MethodGet, fmt.Sprintf("/api/v1/tasks/%d", ht.MemberTaskID), east.admin, nil, &onMember)
	require.Equal(t, "ha-hop", onMember.Name)
	var seen apitypes.HubTaskJSON
	hubs[0].ok(http.StatusOK, http.MethodGet, fmt.Sprintf("/api/v1/hub/tasks/%d", ht.ID), admin, nil, &seen)
	require.Equal(t, ht.MemberTaskID, seen.MemberTaskID, "followed through the first server too")
	require.NotNil(t, seen.Task, "with the member's live view")

	// A keyed submission retried through the other server is answered with
	// the task the first placed; another request under the key is refused.
	keyed := map[string]any{"task": map[string]any{"name": "ha-keyed", "command": []string{"true"}}}
	r := hubs[1].do(http.MethodPost, "/api/v1/hub/tasks", admin, keyed, "Idempotency-Key", "nightly-7")
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	var first, again apitypes.HubTaskJSON
	require.NoError(t, json.Unmarshal(r.Body, &first))
	r = hubs[0].do(http.MethodPost, "/api/v1/hub/tasks", admin, keyed, "Idempotency-Key", "nightly-7")
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	require.Equal(t, "true", r.Header.Get("Idempotent-Replayed"))
	require.NoError(t, json.Unmarshal(r.Body, &again))
	require.Equal(t, first.ID, again.ID)
	require.Equal(t, first.MemberTaskID, again.MemberTaskID)
	keyed["cluster"] = "east"
	r = hubs[0].do(http.MethodPost, "/api/v1/hub/tasks", admin, keyed, "Idempotency-Key", "nightly-7")
	require.Equal(t, http.StatusConflict, r.Status, string(r.Body))
	var e errorBody
	require.NoError(t, json.Unmarshal(r.Body, &e))
	require.Equal(t, "idempotency_key_reused", e.Error.Code)
	var onEast apitypes.List[apitypes.TaskJSON]
	east.s.ok(http.StatusOK, http.MethodGet, "/api/v1/tasks?q=ha-keyed", east.admin, nil, &onEast)
	require.Equal(t, 1, onEast.Total, "one task on the member")

	// One poller: exactly one server holds the hub's lease.
	leader := -1
	require.Eventually(t, func() bool {
		a, b := hubs[0].app.hub.Leader(), hubs[1].app.hub.Leader()
		switch {
		case a && !b:
			leader = 0
		case b && !a:
			leader = 1
		default:
			return false
		}
		return true
	}, 10*time.Second, 50*time.Millisecond, "exactly one hub server polls")
	follower := hubs[1-leader]
	for range 5 { // stays so across renewals
		time.Sleep(leaseTTL / 5)
		require.True(t, hubs[leader].app.hub.Leader())
		require.False(t, follower.app.hub.Leader())
	}

	// The poller stops; the other takes over and sees the member go away.
	hubs[leader].stop()
	require.Eventually(t, follower.app.hub.Leader, 3*leaseTTL, 50*time.Millisecond, "the other server takes the poll over")
	east.s.stop()
	require.Eventually(t, func() bool {
		follower.ok(http.StatusOK, http.MethodGet, "/api/v1/clusters", admin, nil, &list)
		return len(list.Items) == 1 && list.Items[0].Status == "unreachable"
	}, 10*time.Second, 100*time.Millisecond, "the remaining server's polls mark the stopped member unreachable")
}
