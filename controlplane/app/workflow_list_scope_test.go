package app

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane/apitypes"
)

// TestWorkflowListFollowsVisibility: GET /workflows lists exactly what
// GET /workflows/{id} shows, the tasks' policy: a viewer of acme lists
// acme's workflows, a viewer in no tenant or in another tenant lists none
// of them (names, owners and tenants of other teams' pipelines).
func TestWorkflowListFollowsVisibility(t *testing.T) {
	s := startServer(t, t.TempDir())
	admin := s.adminToken()
	for _, name := range []string{"acme", "globex"} {
		s.ok(http.StatusCreated, http.MethodPost, "/api/v1/tenants", admin, map[string]string{"name": name}, nil)
	}
	_, alice := s.userWithRoleTenant(admin, "alice", "user", "acme")
	_, acmeViewer := s.userWithRoleTenant(admin, "vera", "viewer", "acme")
	_, globexViewer := s.userWithRoleTenant(admin, "gabe", "viewer", "globex")
	_, loneViewer := s.userWithRole(admin, "zed", "viewer")

	var w struct {
		ID int64 `json:"id"`
	}
	s.ok(http.StatusCreated, http.MethodPost, "/api/v1/workflows", alice, map[string]any{
		"document": "name: acme-secret-pipeline\nsteps:\n  - name: s1\n    task: {command: [\"true\"]}\n"}, &w)
	path := fmt.Sprintf("/api/v1/workflows/%d", w.ID)

	var l apitypes.List[map[string]any]
	s.ok(http.StatusOK, http.MethodGet, "/api/v1/workflows", acmeViewer, nil, &l)
	require.Equal(t, 1, l.Total, "acme's viewer lists acme's workflow")
	s.ok(http.StatusOK, http.MethodGet, path, acmeViewer, nil, nil)
	for who, cred := range map[string]string{"viewer in no tenant": loneViewer, "globex viewer": globexViewer} {
		r := s.do(http.MethodGet, "/api/v1/workflows", cred, nil)
		require.Equal(t, http.StatusOK, r.Status, who)
		require.NotContains(t, string(r.Body), "acme-secret-pipeline", who)
		s.fails(http.StatusNotFound, "not_found", http.MethodGet, path, cred, nil)
	}
}
