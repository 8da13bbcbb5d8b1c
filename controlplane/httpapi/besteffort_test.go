package httpapi

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
)

// TestTaskAllowBestEffort: allow_best_effort is accepted on Silver tasks
// with devices, returned in the task's detail, and refused (400 naming the
// field) on any other tier.
func TestTaskAllowBestEffort(t *testing.T) {
	e := newEnv(t)
	u := e.tokens[controlplane.RoleUser]
	body := func(qos string) map[string]any {
		return map[string]any{"name": "be-" + qos, "command": []string{"true"}, "device_count": 1, "memory_mib": 1024,
			"compute_percent": 20, "qos": qos, "allow_best_effort": true, "wait_for_nodes": true}
	}
	var created, got TaskJSON
	require.Equal(t, http.StatusCreated, e.call(http.MethodPost, "/api/v1/tasks", u, body("silver"), &created))
	require.True(t, created.AllowBestEffort)
	require.Equal(t, http.StatusOK, e.call(http.MethodGet, "/api/v1/tasks/"+itoa(created.ID), u, nil, &got))
	require.True(t, got.AllowBestEffort, "the detail shows the task allows best effort")
	for _, qos := range []string{"gold", "bronze"} {
		st, er := e.apiErr(http.MethodPost, "/api/v1/tasks", u, body(qos))
		require.Equal(t, http.StatusBadRequest, st, qos)
		require.Contains(t, er.Message, "allow_best_effort", qos)
	}
}
