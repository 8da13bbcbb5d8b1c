package app

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/agent/protocol"
	"github.com/heteroflow/heteroflow/controlplane/apitypes"
	"github.com/heteroflow/heteroflow/controlplane/server"
)

// startHub starts a hub that polls only when asked (its leader's periodic
// poll is an hour away) and asks each member for at most 3 s.
func startHub(t *testing.T) *testServer {
	t.Helper()
	return startServerVersion(t, t.TempDir(), "1.4.2", func(c *server.Config) {
		c.Hub.Enabled = true
		c.Hub.PollInterval = server.Duration(time.Hour)
		c.Hub.Timeout = server.Duration(3 * time.Second)
	})
}

// member is a member cluster of the hub tests: a server with one node of
// one NVIDIA device and an admin API key for the hub.
type member struct {
	dir      string
	s        *testServer
	admin    string
	key      string
	agentKey string
}

func startMember(t *testing.T, version string) *member {
	t.Helper()
	dir := t.TempDir()
	s := startServerVersion(t, dir, version, nil)
	m := &member{dir: dir, s: s, admin: s.adminToken()}
	var k struct {
		Key string `json:"key"`
	}
	s.ok(http.StatusCreated, http.MethodPost, "/api/v1/apikeys", m.admin, map[string]string{"name": "hub", "role": "admin"}, &k)
	m.key = k.Key
	_, m.agentKey = s.enrollNode(m.admin, "node-"+strings.ReplaceAll(strings.TrimPrefix(s.base, "http://"), ":", "-"), "nvidia", 1)
	return m
}

// heartbeat keeps the member's node online (a long test outlives the
// heartbeat timeout of the one sent at enrolment).
func (m *member) heartbeat(t *testing.T) {
	t.Helper()
	m.s.ok(http.StatusOK, http.MethodPost, "/api/v1/agents/heartbeat", m.agentKey,
		protocol.Heartbeat{Health: "ok", CPUCount: 32, MemoryTotalMiB: 256000, MemoryFreeMiB: 200000, Running: []protocol.RunningTask{}}, nil)
}

// assigned waits until the member's agent is handed task id and returns
// its attempt.
func (m *member) assigned(t *testing.T, id int64) int {
	t.Helper()
	attempt := 0
	require.Eventually(t, func() bool {
		var l protocol.AssignmentList
		m.s.ok(http.StatusOK, http.MethodGet, "/api/v1/agents/assignments?wait=0", m.agentKey, nil, &l)
		for _, it := range l.Items {
			if it.Task != nil && it.Task.TaskID == id {
				attempt = it.Task.Attempt
				return true
			}
		}
		return false
	}, 20*time.Second, 50*time.Millisecond, "task %d never assigned on %s", id, m.s.base)
	return attempt
}

// TestHubMultiCluster runs a hub against two in-process member servers:
// registration refused for an unreachable URL, a wrong key, a viewer's
// key and another version (nothing stored); the side-by-side summary;
// auto placement on the member with free capacity; a forwarded task
// followed to its end with logs and why through the hub; cancel
// propagated; a member killed → its tasks unknown, the other still
// served; PromQL fanned out with the cluster label.
func TestHubMultiCluster(t *testing.T) {
	east, west := startMember(t, "1.4.0"), startMember(t, "1.4.0")
	other := startMember(t, "1.5.0")
	hub := startServerVersion(t, t.TempDir(), "1.4.2", func(c *server.Config) {
		c.Hub.Enabled = true
		c.Hub.PollInterval = server.Duration(time.Second) // the leader's periodic poll sees east go
		c.Hub.Timeout = server.Duration(3 * time.Second)
	})
	admin := hub.adminToken()
	reg := func(name string, m *member) map[string]string {
		return map[string]string{"name": name, "url": m.s.base, "api_key": m.key}
	}

	// Refusals, each with its code; nothing is stored.
	bad := reg("east", east)
	bad["url"] = "http://127.0.0.1:1"
	msg := hub.fails(http.StatusBadRequest, "cluster_unreachable", http.MethodPost, "/api/v1/clusters", admin, bad)
	require.Contains(t, msg, "127.0.0.1:1")
	bad = reg("east", east)
	bad["api_key"] = "hf_wrong_key"
	hub.fails(http.StatusBadRequest, "cluster_key_rejected", http.MethodPost, "/api/v1/clusters", admin, bad)
	var viewerKey struct {
		Key string `json:"key"`
	}
	east.s.ok(http.StatusCreated, http.MethodPost, "/api/v1/apikeys", east.admin, map[string]string{"name": "ro", "role": "viewer"}, &viewerKey)
	bad["api_key"] = viewerKey.Key
	hub.fails(http.StatusBadRequest, "cluster_key_role", http.MethodPost, "/api/v1/clusters", admin, bad)
	msg = hub.fails(http.StatusBadRequest, "cluster_version_mismatch", http.MethodPost, "/api/v1/clusters", admin, reg("other", other))
	require.Contains(t, msg, "1.5.0")
	bad = reg("Bad Name", east)
	hub.fails(http.StatusBadRequest, "cluster_name_invalid", http.MethodPost, "/api/v1/clusters", admin, bad)
	bad = reg("east", east)
	bad["url"] = "ftp://x"
	hub.fails(http.StatusBadRequest, "cluster_url_invalid", http.MethodPost, "/api/v1/clusters", admin, bad)
	var list apitypes.List[apitypes.ClusterJSON]
	hub.ok(http.StatusOK, http.MethodGet, "/api/v1/clusters", admin, nil, &list)
	require.Empty(t, list.Items, "a refused registration stores nothing")

	// Registered: the key is never returned; the summary is there at once.
	east.heartbeat(t)
	west.heartbeat(t)
	r := hub.do(http.MethodPost, "/api/v1/clusters", admin, reg("east", east))
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	require.NotContains(t, string(r.Body), east.key)
	hub.ok(http.StatusCreated, http.MethodPost, "/api/v1/clusters", admin, reg("west", west), nil)
	hub.fails(http.StatusConflict, "cluster_exists", http.MethodPost, "/api/v1/clusters", admin, reg("west", west))
	r = hub.do(http.MethodGet, "/api/v1/clusters", admin, nil)
	require.NotContains(t, string(r.Body), east.key)
	require.NoError(t, json.Unmarshal(r.Body, &list))
	require.Len(t, list.Items, 2)
	for _, c := range list.Items {
		require.Equal(t, "reachable", c.Status, c.Name)
		require.Equal(t, "1.4.0", c.Version)
		require.NotNil(t, c.Summary, c.Name)
		require.Equal(t, 1, c.Summary.NodesOnline)
		require.Equal(t, []apitypes.DeviceGroupJSON{{Vendor: "nvidia", Model: "H100", Total: 1, Online: 1, Free: 1,
			FreeMiB: 81920, FreeComputePercent: 100}}, c.Summary.Devices)
	}
	// The audit log names the registration.
	var audit apitypes.List[apitypes.AuditJSON]
	hub.ok(http.StatusOK, http.MethodGet, "/api/v1/audit?q=cluster.register&limit=50", admin, nil, &audit)
	require.NotEmpty(t, audit.Items)

	// East's only device is taken by a task of its own.
	busy := east.s.submit(east.admin, map[string]any{"name": "local", "command": []string{"sleep", "100"}, "device_count": 1, "compute_percent": 100})
	east.assigned(t, busy)

	// Auto placement picks west, where a device is free.
	west.heartbeat(t)
	_, alice := hub.userWithRole(admin, "alice", "user")
	var ht apitypes.HubTaskJSON
	hub.ok(http.StatusCreated, http.MethodPost, "/api/v1/hub/tasks", alice, map[string]any{"cluster": "auto",
		"task": map[string]any{"name": "train", "command": []string{"echo", "hi"}, "device_count": 1, "compute_percent": 100}}, &ht)
	require.Equal(t, "west", ht.Cluster, "scores %+v", ht.Scores)
	require.NotZero(t, ht.MemberTaskID)
	require.Len(t, ht.Scores, 2)
	require.Equal(t, "east", ht.Scores[1].Cluster)
	require.Zero(t, ht.Scores[1].Fits, "east has no free device")
	var onMember apitypes.TaskJSON
	west.s.ok(http.StatusOK, http.MethodGet, fmt.Sprintf("/api/v1/tasks/%d", ht.MemberTaskID), west.admin, nil, &onMember)
	require.Equal(t, "alice", onMember.Labels["heteroflow.hub/owner"])

	// Followed to its end: the member's agent runs it and writes logs.
	attempt := west.assigned(t, ht.MemberTaskID)
	now := time.Now()
	exit := 0
	west.s.ok(http.StatusOK, http.MethodPost, "/api/v1/agents/status", west.agentKey, protocol.StatusBatch{Updates: []protocol.StatusUpdate{
		{Seq: 1, TaskID: ht.MemberTaskID, Attempt: attempt, Phase: protocol.PhaseStarted, At: now},
	}}, nil)
	west.s.ok(http.StatusNoContent, http.MethodPost, "/api/v1/agents/logs", west.agentKey, protocol.LogBatch{Chunks: []protocol.LogChunk{
		{TaskID: ht.MemberTaskID, Attempt: attempt, Stream: "stdout", Offset: 0, Data: "hi from west\n"},
	}}, nil)
	west.s.ok(http.StatusOK, http.MethodPost, "/api/v1/agents/status", west.agentKey, protocol.StatusBatch{Updates: []protocol.StatusUpdate{
		{Seq: 2, TaskID: ht.MemberTaskID, Attempt: attempt, Phase: protocol.PhaseSucceeded, ExitCode: &exit, At: now.Add(time.Second)},
	}}, nil)
	path := fmt.Sprintf("/api/v1/hub/tasks/%d", ht.ID)
	hub.ok(http.StatusOK, http.MethodGet, path, alice, nil, &ht)
	require.Equal(t, "succeeded", ht.State)
	require.NotNil(t, ht.Task)
	r = hub.do(http.MethodGet, path+"/logs", alice, nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	require.Contains(t, string(r.Body), "hi from west")
	hub.ok(http.StatusOK, http.MethodGet, path+"/why", alice, nil, nil)
	// Others' forwarded tasks are not found; admins see them.
	_, bob := hub.userWithRole(admin, "bob", "user")
	hub.fails(http.StatusNotFound, "not_found", http.MethodGet, path, bob, nil)
	var tasks apitypes.List[apitypes.HubTaskJSON]
	hub.ok(http.StatusOK, http.MethodGet, "/api/v1/hub/tasks", bob, nil, &tasks)
	require.Zero(t, tasks.Total)
	hub.ok(http.StatusOK, http.MethodGet, "/api/v1/hub/tasks", admin, nil, &tasks)
	require.Equal(t, 1, tasks.Total)

	// A member without the requested devices is never chosen.
	hub.fails(http.StatusBadRequest, "no_cluster_fits", http.MethodPost, "/api/v1/hub/tasks", alice, map[string]any{
		"task": map[string]any{"name": "x", "command": []string{"true"}, "device_count": 4}})

	// Cancel on the hub reaches the member.
	var waiting apitypes.HubTaskJSON
	hub.ok(http.StatusCreated, http.MethodPost, "/api/v1/hub/tasks", alice, map[string]any{"cluster": "east",
		"task": map[string]any{"name": "wait", "command": []string{"true"}, "device_count": 1, "compute_percent": 100}}, &waiting)
	require.Equal(t, "east", waiting.Cluster)
	hub.ok(http.StatusOK, http.MethodPost, fmt.Sprintf("/api/v1/hub/tasks/%d/cancel", waiting.ID), alice, nil, &waiting)
	require.Equal(t, "cancelled", waiting.State)
	east.s.ok(http.StatusOK, http.MethodGet, fmt.Sprintf("/api/v1/tasks/%d", waiting.MemberTaskID), east.admin, nil, &onMember)
	require.Equal(t, "cancelled", string(onMember.State))

	// Another waits on east; then east goes away.
	hub.ok(http.StatusCreated, http.MethodPost, "/api/v1/hub/tasks", alice, map[string]any{"clusters": []string{"east"},
		"task": map[string]any{"name": "stranded", "command": []string{"true"}, "device_count": 1, "compute_percent": 100}}, &waiting)
	require.Equal(t, "east", waiting.Cluster)

	// PromQL fans out with the cluster label, and a cluster matcher selects.
	var pr struct {
		Status string `json:"status"`
		Data   struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Metric map[string]string `json:"metric"`
			} `json:"result"`
		} `json:"data"`
		Warnings []string `json:"warnings"`
	}
	clusters := func() []string {
		var out []string
		for _, s := range pr.Data.Result {
			out = append(out, s.Metric["cluster"])
		}
		return out
	}
	hub.ok(http.StatusOK, http.MethodGet, "/prometheus/api/v1/query?query="+url.QueryEscape("vector(1)"), admin, nil, &pr)
	require.Equal(t, "vector", pr.Data.ResultType)
	require.ElementsMatch(t, []string{"east", "west"}, clusters())
	hub.ok(http.StatusOK, http.MethodGet, "/prometheus/api/v1/query?query="+url.QueryEscape(`count(up{cluster="west"}) or vector(1)`), admin, nil, &pr)
	require.Equal(t, []string{"west"}, clusters())
	hub.ok(http.StatusOK, http.MethodGet, "/prometheus/api/v1/query?cluster=east&query="+url.QueryEscape("vector(1)"), admin, nil, &pr)
	require.Equal(t, []string{"east"}, clusters(), "the cluster parameter selects one member")
	end := time.Now().Unix()
	hub.ok(http.StatusOK, http.MethodGet, fmt.Sprintf("/prometheus/api/v1/query_range?query=vector(2)&start=%d&end=%d&step=15", end-60, end), admin, nil, &pr)
	require.Equal(t, "matrix", pr.Data.ResultType)
	require.ElementsMatch(t, []string{"east", "west"}, clusters())
	r = hub.do(http.MethodGet, "/prometheus/api/v1/query?query="+url.QueryEscape("sum("), admin, nil)
	require.Equal(t, http.StatusBadRequest, r.Status, string(r.Body))

	hub.ok(http.StatusOK, http.MethodPost, "/api/v1/clusters/refresh", admin, nil, &list)
	require.Len(t, list.Items, 2)

	// East is killed: the leader's poll marks it unreachable and its unfinished
	// task unknown; west is still served, placement and PromQL go on.
	east.s.stop()
	byName := map[string]apitypes.ClusterJSON{}
	require.Eventually(t, func() bool {
		hub.ok(http.StatusOK, http.MethodGet, "/api/v1/clusters", admin, nil, &list)
		for _, c := range list.Items {
			byName[c.Name] = c
		}
		return byName["east"].Status == "unreachable"
	}, 15*time.Second, 100*time.Millisecond, "the hub leader's poll never marked east unreachable")
	require.NotEmpty(t, byName["east"].LastError)
	require.NotNil(t, byName["east"].Summary, "the last summary is kept")
	require.Equal(t, "reachable", byName["west"].Status)
	hub.ok(http.StatusOK, http.MethodGet, fmt.Sprintf("/api/v1/hub/tasks/%d", waiting.ID), alice, nil, &waiting)
	require.Equal(t, "unknown", waiting.State)
	require.Contains(t, waiting.Reason, "east")
	hub.ok(http.StatusOK, http.MethodGet, path, alice, nil, &ht)
	require.Equal(t, "succeeded", ht.State, "west's task is still served")
	west.heartbeat(t)
	hub.ok(http.StatusCreated, http.MethodPost, "/api/v1/hub/tasks", alice, map[string]any{
		"task": map[string]any{"name": "after", "command": []string{"true"}}}, &ht)
	require.Equal(t, "west", ht.Cluster)
	hub.ok(http.StatusOK, http.MethodGet, "/prometheus/api/v1/query?query="+url.QueryEscape("vector(1)"), admin, nil, &pr)
	require.Equal(t, []string{"west"}, clusters())
	require.NotEmpty(t, pr.Warnings, "east's failure is a warning")
	hub.fails(http.StatusConflict, "cluster_unreachable", http.MethodPost, fmt.Sprintf("/api/v1/hub/tasks/%d/cancel", waiting.ID), alice, nil)

	// East comes back on its address: the poll finds it again and its
	// task leaves unknown for its real state there.
	east.s = startServerVersion(t, east.dir, "1.4.0", func(c *server.Config) { c.APIAddr = strings.TrimPrefix(east.s.base, "http://") })
	require.Eventually(t, func() bool {
		hub.ok(http.StatusOK, http.MethodGet, fmt.Sprintf("/api/v1/hub/tasks/%d", waiting.ID), alice, nil, &waiting)
		return waiting.State == "queued"
	}, 15*time.Second, 100*time.Millisecond, "the task on east never left unknown: %+v", waiting)
	require.Eventually(t, func() bool {
		hub.ok(http.StatusOK, http.MethodGet, "/api/v1/clusters", admin, nil, &list)
		return list.Items[0].Status == "reachable" && list.Items[1].Status == "reachable"
	}, 15*time.Second, 100*time.Millisecond, "the poll never found east again: %+v", list.Items)

	// Unregistering is audited and leaves the other member.
	hub.ok(http.StatusNoContent, http.MethodDelete, fmt.Sprintf("/api/v1/clusters/%d", byName["east"].ID), admin, nil, nil)
	hub.ok(http.StatusOK, http.MethodGet, "/api/v1/clusters", admin, nil, &list)
	require.Len(t, list.Items, 1)
	hub.fails(http.StatusForbidden, "forbidden", http.MethodPost, "/api/v1/clusters", alice, reg("west2", west))
}
