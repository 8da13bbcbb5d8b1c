package app

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/agent/protocol"
)

// TestTaskTenantAndSecrets walks the task isolation rules end to end:
// tenants on submit, ownership on why, env and logs hidden from viewers and
// other nodes' agents, and secret_env handed only to the agent that runs
// the task.
func TestTaskTenantAndSecrets(t *testing.T) {
	s := startServer(t, t.TempDir())
	admin := s.adminToken()
	setTenant := func(id int64, tenant string) {
		s.ok(http.StatusOK, http.MethodPatch, fmt.Sprintf("/api/v1/users/%d", id), admin, map[string]string{"tenant": tenant}, nil)
	}
	_, noTenant := s.userWithRole(admin, "loner", "user")
	aliceID, _ := s.userWithRole(admin, "alice", "user")
	setTenant(aliceID, "acme")
	alice, _ := s.login("alice", testPassword) // a fresh token carries the tenant
	_, other := s.userWithRole(admin, "bob", "user")
	viewerID, _ := s.userWithRole(admin, "acme-viewer", "viewer")
	setTenant(viewerID, "acme")
	acmeViewer, _ := s.login("acme-viewer", testPassword)
	_, globalViewer := s.userWithRole(admin, "global-viewer", "viewer")
	_, operator := s.userWithRole(admin, "op", "operator")

	// Submit: no tenant → no tenant may be named; a tenant → only its own.
	s.ok(http.StatusCreated, http.MethodPost, "/api/v1/tenants", admin, map[string]string{"name": "globex"}, nil)
	s.fails(http.StatusForbidden, "tenant_forbidden", http.MethodPost, "/api/v1/tasks", noTenant,
		map[string]any{"name": "steal", "command": []string{"true"}, "tenant": "acme"})
	s.fails(http.StatusForbidden, "tenant_forbidden", http.MethodPost, "/api/v1/tasks", alice,
		map[string]any{"name": "steal", "command": []string{"true"}, "tenant": "globex"})
	s.submit(operator, map[string]any{"name": "ops", "command": []string{"true"}, "tenant": "globex"})

	// Alice's task carries a secret; it is placed on a node.
	node, agentKey := s.enrollNode(admin, "iso-node", "nvidia", 1)
	_, otherAgent := s.enrollNode(admin, "iso-other", "nvidia", 1)
	id := s.submit(alice, map[string]any{"name": "train", "command": []string{"env"}, "env": map[string]string{"A": "1"},
		"secret_env": map[string]string{"DB_PASSWORD": "hunter2-secret"}, "device_count": 1, "compute_percent": 100})
	path := fmt.Sprintf("/api/v1/tasks/%d", id)

	var assigned protocol.AssignmentList
	require.Eventually(t, func() bool {
		for _, a := range []string{agentKey, otherAgent} {
			s.ok(http.StatusOK, http.MethodGet, "/api/v1/agents/assignments?wait=0", a, nil, &assigned)
			for _, it := range assigned.Items {
				if it.Task != nil && it.Task.TaskID == id {
					if a == otherAgent {
						agentKey, otherAgent = otherAgent, agentKey // placed on the other node
					}
					return true
				}
			}
		}
		return false
	}, 20*time.Second, 50*time.Millisecond, "task never assigned")
	_ = node
	var run *protocol.TaskSpec
	for _, it := range assigned.Items {
		if it.Task != nil && it.Task.TaskID == id {
			run = it.Task
		}
	}
	require.Equal(t, map[string]string{"DB_PASSWORD": "hunter2-secret"}, run.SecretEnv, "the running agent gets the secret")
	require.Equal(t, map[string]string{"A": "1"}, run.Env)

	// Nobody reads the secret back through the API: owner, admin, lists.
	for _, cred := range []string{alice, admin, operator, acmeViewer, globalViewer, agentKey} {
		for _, p := range []string{path, "/api/v1/tasks?limit=100", path + "/events"} {
			r := s.do(http.MethodGet, p, cred, nil)
			require.NotContains(t, string(r.Body), "hunter2-secret", "GET %s", p)
		}
	}
	var got map[string]any
	s.ok(http.StatusOK, http.MethodGet, path, alice, nil, &got)
	require.Equal(t, []any{"DB_PASSWORD"}, got["secret_env_keys"])
	require.Equal(t, map[string]any{"A": "1"}, got["env"], "the owner sees env")
	require.NotContains(t, got, "secret_env")

	// Viewers never see env; a viewer outside the tenant does not see the task.
	got = nil
	s.ok(http.StatusOK, http.MethodGet, path, acmeViewer, nil, &got)
	require.NotContains(t, got, "env")
	require.Equal(t, true, got["env_hidden"])
	s.fails(http.StatusNotFound, "not_found", http.MethodGet, path, globalViewer, nil)
	var list struct {
		Items []map[string]any `json:"items"`
	}
	s.ok(http.StatusOK, http.MethodGet, "/api/v1/tasks?limit=100", acmeViewer, nil, &list)
	for _, it := range list.Items {
		require.Equal(t, "acme", it["tenant"], "a tenant's viewer lists only its tenant")
	}
	s.fails(http.StatusForbidden, "tenant_forbidden", http.MethodGet, "/api/v1/tasks?limit=100&tenant=globex", acmeViewer, nil)

	// Logs: the tenant's viewer yes, a viewer outside the tenant no.
	s.ok(http.StatusOK, http.MethodGet, path+"/logs", acmeViewer, nil, nil)
	s.fails(http.StatusNotFound, "not_found", http.MethodGet, path+"/logs", globalViewer, nil)

	// why: other users' tasks are not found, like every task route.
	s.fails(http.StatusNotFound, "not_found", http.MethodGet, path+"/why", other, nil)
	s.ok(http.StatusOK, http.MethodGet, path+"/why", alice, nil, nil)

	// Agent keys: only tasks on their own node, never env.
	got = nil
	s.ok(http.StatusOK, http.MethodGet, path, agentKey, nil, &got)
	require.NotContains(t, got, "env")
	s.fails(http.StatusNotFound, "not_found", http.MethodGet, path, otherAgent, nil)
	s.fails(http.StatusNotFound, "not_found", http.MethodGet, path+"/logs", otherAgent, nil)
	list.Items = nil
	s.ok(http.StatusOK, http.MethodGet, "/api/v1/tasks?limit=100", otherAgent, nil, &list)
	for _, it := range list.Items {
		require.NotEqual(t, float64(id), it["id"])
	}

	// The audit log does not carry the secret either.
	r := s.do(http.MethodGet, "/api/v1/audit?limit=1000", admin, nil)
	require.Equal(t, http.StatusOK, r.Status)
	require.False(t, strings.Contains(string(r.Body), "hunter2-secret"))
}
