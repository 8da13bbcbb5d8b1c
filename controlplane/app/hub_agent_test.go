package app

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane/apitypes"
)

// TestHubTasksRefuseAgentKeys: an agent key acts for the node it was
// enrolled for, but its owner is the administrator who issued the
// bootstrap token. The hub's task routes know callers by user id, so a
// node's key would read that administrator's forwarded tasks (the member's
// task with its env, the logs, why): they are for people only.
func TestHubTasksRefuseAgentKeys(t *testing.T) {
	east := startMember(t, "1.4.0")
	hub := startHub(t)
	admin := hub.adminToken()
	hub.ok(http.StatusCreated, http.MethodPost, "/api/v1/clusters", admin,
		map[string]string{"name": "east", "url": east.s.base, "api_key": east.key}, nil)
	var ht apitypes.HubTaskJSON
	hub.ok(http.StatusCreated, http.MethodPost, "/api/v1/hub/tasks", admin, map[string]any{"cluster": "east",
		"task": map[string]any{"name": "admins-job", "command": []string{"true"}, "env": map[string]string{"DB_PASSWORD": "hunter2"},
			"device_count": 1, "compute_percent": 100}}, &ht)

	// A node enrolled on the hub itself, with a token the admin issued.
	_, agentKey := hub.enrollNode(admin, "hub-node", "nvidia", 1)
	id := fmt.Sprint(ht.ID)
	for _, path := range []string{"/api/v1/hub/tasks", "/api/v1/hub/tasks/" + id, "/api/v1/hub/tasks/" + id + "/logs",
		"/api/v1/hub/tasks/" + id + "/why"} {
		r := hub.do(http.MethodGet, path, agentKey, nil)
		require.Equal(t, http.StatusForbidden, r.Status, "%s: %s", path, r.Body)
		require.NotContains(t, string(r.Body), "hunter2", path)
		require.NotContains(t, string(r.Body), "admins-job", path)
	}
	// The administrator still reads it.
	hub.ok(http.StatusOK, http.MethodGet, "/api/v1/hub/tasks/"+id, admin, nil, nil)
}
