package app

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTenantViewerSeesButDoesNotAct: a tenant's viewer sees all its tasks
// and workflows (never their env) and submits nothing there. Cancelling a
// member's task or workflow, retrying it, or resubmitting it (a copy the
// viewer would own, spec and env included, running on the tenant's
// quota) is acting: 403 tenant_read_only, nothing changes. The tenant's
// admins and the owner act; an owner who became a viewer no longer
// resubmits into the tenant.
func TestTenantViewerSeesButDoesNotAct(t *testing.T) {
	s := startServer(t, t.TempDir())
	admin := s.adminToken()
	s.ok(http.StatusCreated, http.MethodPost, "/api/v1/tenants", admin, map[string]string{"name": "acme"}, nil)
	_, alice := s.userWithRoleTenant(admin, "alice", "user", "acme")
	_, bob := s.userWithRole(admin, "bob", "user")
	_, tia := s.userWithRole(admin, "tia", "user")
	s.ok(http.StatusOK, http.MethodPut, "/api/v1/tenants/acme/members/bob", admin, map[string]string{"role": "viewer"}, nil)
	s.ok(http.StatusOK, http.MethodPut, "/api/v1/tenants/acme/members/tia", admin, map[string]string{"role": "tenant-admin"}, nil)

	var task struct {
		ID    int64  `json:"id"`
		State string `json:"state"`
	}
	s.ok(http.StatusCreated, http.MethodPost, "/api/v1/tasks", alice, map[string]any{"name": "train", "command": []string{"true"},
		"env": map[string]string{"DB_PASSWORD": "hunter2"}, "device_count": 1, "wait_for_nodes": true}, &task)
	var wf struct {
		ID    int64  `json:"id"`
		State string `json:"state"`
	}
	s.ok(http.StatusCreated, http.MethodPost, "/api/v1/workflows", alice, map[string]any{
		"document": "name: pipeline\nsteps:\n  - name: s1\n    task: {command: [\"true\"], env: {DB_PASSWORD: hunter2}, device_count: 1}\n"}, &wf)
	taskPath, wfPath := fmt.Sprintf("/api/v1/tasks/%d", task.ID), fmt.Sprintf("/api/v1/workflows/%d", wf.ID)

	// The viewer sees both, without env.
	r := s.do(http.MethodGet, taskPath, bob, nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	require.NotContains(t, string(r.Body), "hunter2")
	s.ok(http.StatusOK, http.MethodGet, wfPath, bob, nil, nil)

	// ... and acts on neither.
	s.fails(http.StatusForbidden, "tenant_read_only", http.MethodPost, taskPath+"/cancel", bob, map[string]any{})
	for _, op := range []string{"cancel", "retry", "resubmit"} {
		s.fails(http.StatusForbidden, "tenant_read_only", http.MethodPost, wfPath+"/"+op, bob, map[string]any{})
	}
	s.ok(http.StatusOK, http.MethodGet, taskPath, alice, nil, &task)
	require.NotEqual(t, "cancelled", task.State)
	s.ok(http.StatusOK, http.MethodGet, wfPath, alice, nil, &wf)
	require.NotEqual(t, "cancelled", wf.State)
	var mine struct {
		Total int `json:"total"`
	}
	s.ok(http.StatusOK, http.MethodGet, "/api/v1/workflows", bob, nil, &mine)
	require.Zero(t, mine.Total, "no copy was made: bob owns no workflow")

	// An owner demoted to viewer no longer resubmits into the tenant.
	s.ok(http.StatusOK, http.MethodPut, "/api/v1/tenants/acme/members/alice", admin, map[string]string{"role": "viewer"}, nil)
	s.fails(http.StatusForbidden, "tenant_read_only", http.MethodPost, wfPath+"/resubmit", alice, map[string]any{})

	// The tenant's admin acts.
	s.ok(http.StatusOK, http.MethodPost, taskPath+"/cancel", tia, map[string]any{}, &task)
	require.Equal(t, "cancelled", task.State)
	s.ok(http.StatusOK, http.MethodPost, wfPath+"/cancel", tia, map[string]any{}, &wf)
	require.Equal(t, "cancelled", wf.State)
}
