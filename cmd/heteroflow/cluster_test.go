package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane/server"
)

// TestClusterCLI drives `heteroflow cluster` against a hub and one member
// cluster, both real servers: registration (refused with a wrong key or
// without one, nothing stored), the side-by-side list, a task placed
// through the hub and followed there (list, show, why, cancel on the
// member), bad IDs, and removal.
func TestClusterCLI(t *testing.T) {
	member := startApp(t)
	hub := startAppWith(t, func(c *server.Config) { c.Hub.Enabled = true })
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "east.key")
	require.NoError(t, os.WriteFile(keyFile, []byte(apiKeyWithRole(t, member.base, "admin")+"\n"), 0o600))
	wrongKey := filepath.Join(dir, "wrong.key")
	require.NoError(t, os.WriteFile(wrongKey, []byte("hf_not-a-key\n"), 0o600))

	// The member gets a CPU node (its agent enrolled through the CLI's
	// login to the member), then the CLI logs in to the hub.
	r := cli(t, nil, adminPassword+"\n", "login", "--server", member.base, "--username", "admin", "--password-stdin")
	require.Equal(t, 0, r.code, r.stderr)
	startAgent(t, member.base, "east-node")
	r = cli(t, nil, adminPassword+"\n", "login", "--server", hub.base, "--username", "admin", "--password-stdin")
	require.Equal(t, 0, r.code, r.stderr)
	r = cli(t, nil, "", "cluster", "list")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "no member clusters")

	r = cli(t, nil, "", "cluster", "register", "--name", "east", "--url", member.base)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "--member-key-file is required")
	r = cli(t, nil, "", "cluster", "register", "--name", "east", "--url", member.base, "--member-key-file", wrongKey)
	require.Equal(t, 1, r.code)
	require.NotEmpty(t, r.stderr)
	r = cli(t, nil, "", "cluster", "list", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, `"total": 0`, "a refused registration stores nothing")

	key, err := os.ReadFile(keyFile)
	require.NoError(t, err)
	r = cli(t, nil, string(key), "cluster", "register", "--name", "east", "--url", member.base, "--member-key-file", "-")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, `"east" registered (reachable`)
	r = cli(t, nil, "", "cluster", "refresh")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "east")
	require.Contains(t, r.stdout, "reachable")
	require.Contains(t, r.stdout, member.base)
	var clusters struct {
		Items []struct {
			ID   int64
			Name string
		}
	}
	r = cli(t, nil, "", "cluster", "list", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &clusters))
	require.Len(t, clusters.Items, 1)

	// A CPU task through the hub, run by the member's node; the hub
	// follows it there.
	hop := []string{"cluster", "submit", "--json", "--idempotency-key", "hop-1", "--name", "hop", "--label", "via=hub", "--", "sh", "-c", "echo hi; sleep 600"}
	r = cli(t, nil, "", hop...)
	require.Equal(t, 0, r.code, r.stderr)
	var ht, again struct {
		ID           int64
		Cluster      string
		MemberTaskID int64 `json:"member_task_id"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &ht))
	require.Equal(t, "east", ht.Cluster)
	require.Positive(t, ht.MemberTaskID)
	r = cli(t, nil, "", hop...)
	require.Equal(t, 0, r.code, r.stderr)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &again))
	require.Equal(t, ht.ID, again.ID, "the same key answers the task already placed")
	r = cli(t, nil, "", "cluster", "submit", "--name", "bad", "--label", "novalue", "--", "true")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "KEY=VALUE")
	r = cli(t, nil, "", "cluster", "submit", "--name", "nowhere", "--cluster", "mars", "--", "true")
	require.Equal(t, 1, r.code)
	require.NotEmpty(t, r.stderr)

	r = cli(t, nil, "", "cluster", "tasks", "--cluster", "east")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "hop")
	require.Contains(t, r.stdout, "1 of 1")
	id := strconvI(ht.ID)
	r = cli(t, nil, "", "cluster", "task", id)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "on east as task "+strconvI(ht.MemberTaskID))
	require.Contains(t, r.stdout, "'echo hi; sleep 600'", "the member's task is shown")
	r = cli(t, nil, "", "cluster", "why", id)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "task / 任务 "+strconvI(ht.MemberTaskID))
	require.Eventually(t, func() bool {
		r = cli(t, nil, "", "cluster", "logs", id)
		return r.code == 0 && r.stdout == "hi\n"
	}, 30*time.Second, 300*time.Millisecond, "the member's output through the hub: %+v", r)
	r = cli(t, nil, "", "cluster", "cancel", id)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "cancelled on east")
	r = cli(t, nil, "", "cluster", "cancel", id)
	require.Equal(t, 1, r.code, "a cancelled task cannot be cancelled again")

	r = cli(t, nil, "", "cluster", "task", "abc")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "positive number")
	r = cli(t, nil, "", "cluster", "get", "999")
	require.Equal(t, 1, r.code)
	r = cli(t, nil, "", "cluster", "get", strconvI(clusters.Items[0].ID))
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "east")
	r = cli(t, nil, "", "cluster", "remove", strconvI(clusters.Items[0].ID))
	require.Equal(t, 0, r.code, r.stderr)
	r = cli(t, nil, "", "cluster", "list")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "no member clusters")
}
