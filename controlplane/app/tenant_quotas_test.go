package app

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

type quotaOut struct {
	ID             int64  `json:"id"`
	Tenant         string `json:"tenant"`
	Project        string `json:"project"`
	Vendor         string `json:"vendor"`
	Devices        int64  `json:"devices"`
	MemoryMiB      int64  `json:"memory_mib"`
	ComputePercent int64  `json:"compute_percent"`
	Policy         string `json:"policy"`
	Used           *struct {
		Devices int64 `json:"devices"`
	} `json:"used"`
}

// TestTenantAdminQuotasWithinTenant: a tenant admin sets its projects'
// quotas through /tenants/{tenant}/quotas, each limit within the tenant's
// own quota (same vendor or all vendors), never the tenant's quota itself;
// every refusal is a coded 4xx and stores nothing; members read the quotas
// with their live use; other tenants see none of them; cluster admins set
// any quota.
func TestTenantAdminQuotasWithinTenant(t *testing.T) {
	s := startServer(t, t.TempDir())
	admin := s.adminToken()
	_, ann := s.userWithRoleTenant(admin, "ann", "user", "acme")
	s.ok(http.StatusOK, http.MethodPut, "/api/v1/tenants/acme/members/ann", admin, map[string]string{"role": "tenant-admin"}, nil)
	_, bob := s.userWithRoleTenant(admin, "bob", "user", "acme")
	_, gil := s.userWithRoleTenant(admin, "gil", "user", "globex")
	for _, p := range []string{"vision", "nlp"} {
		s.ok(http.StatusCreated, http.MethodPost, "/api/v1/tenants/acme/projects", admin, map[string]string{"name": p}, nil)
	}
	var all, nv quotaOut
	s.ok(http.StatusCreated, http.MethodPost, "/api/v1/tenants/acme/quotas", admin, map[string]any{"devices": 4, "compute_percent": 400}, &all)
	s.ok(http.StatusCreated, http.MethodPost, "/api/v1/tenants/acme/quotas", admin, map[string]any{"vendor": "nvidia", "devices": 2}, &nv)
	require.Equal(t, "queue", all.Policy, "queue is the default policy")

	var vision quotaOut
	s.ok(http.StatusCreated, http.MethodPost, "/api/v1/tenants/acme/quotas", ann,
		map[string]any{"project": "vision", "devices": 3, "compute_percent": 300, "policy": "refuse"}, &vision)
	require.Equal(t, "refuse", vision.Policy)

	list := func(cred string) []quotaOut {
		var l struct{ Items []quotaOut }
		s.ok(http.StatusOK, http.MethodGet, "/api/v1/tenants/acme/quotas", cred, nil, &l)
		return l.Items
	}
	before := len(list(admin))
	for _, c := range []struct {
		name, code, method, path string
		body                     map[string]any
	}{
		{"over the tenant's devices", "quota_exceeds_tenant", http.MethodPost, "", map[string]any{"project": "nlp", "devices": 5, "compute_percent": 100}},
		{"over the tenant's nvidia devices", "quota_exceeds_tenant", http.MethodPost, "", map[string]any{"project": "nlp", "vendor": "nvidia", "devices": 3, "compute_percent": 100}},
		{"unlimited where the tenant is limited", "quota_exceeds_tenant", http.MethodPost, "", map[string]any{"project": "nlp", "devices": 2}},
		{"the tenant's own quota", "quota_tenant_level", http.MethodPost, "", map[string]any{"devices": 1}},
		{"a project the tenant lacks", "quota_project_not_found", http.MethodPost, "", map[string]any{"project": "ghost", "devices": 1, "compute_percent": 100}},
		{"changing the tenant's quota", "quota_tenant_level", http.MethodPut, fmt.Sprintf("/%d", all.ID), map[string]any{"devices": 40}},
		{"raising a project over the tenant", "quota_exceeds_tenant", http.MethodPut, fmt.Sprintf("/%d", vision.ID), map[string]any{"project": "vision", "devices": 9, "compute_percent": 100}},
	} {
		t.Run(c.name, func(t *testing.T) {
			msg := s.fails(http.StatusBadRequest, c.code, c.method, "/api/v1/tenants/acme/quotas"+c.path, ann, c.body)
			require.NotEmpty(t, msg)
		})
	}
	// A tenant that does not exist: a coded 404, even for a cluster admin, and nothing stored.
	s.fails(http.StatusNotFound, "tenant_not_found", http.MethodPost, "/api/v1/tenants/nope/quotas", admin, map[string]any{"devices": 1})
	s.fails(http.StatusNotFound, "tenant_not_found", http.MethodGet, "/api/v1/tenants/nope/quotas", admin, nil)
	// A project the tenant lacks: refused for a cluster admin too.
	s.fails(http.StatusBadRequest, "quota_project_not_found", http.MethodPost, "/api/v1/tenants/acme/quotas", admin,
		map[string]any{"project": "ghost", "devices": 1})
	require.Len(t, list(admin), before)
	s.fails(http.StatusBadRequest, "quota_tenant_level", http.MethodDelete, fmt.Sprintf("/api/v1/tenants/acme/quotas/%d", all.ID), ann, nil)
	got := list(admin)
	require.Len(t, got, before, "refused requests store nothing")
	for _, q := range got {
		switch q.ID {
		case all.ID:
			require.Equal(t, int64(4), q.Devices, "the tenant's quota is unchanged")
		case vision.ID:
			require.Equal(t, int64(3), q.Devices)
		}
	}

	// Within bounds: the tenant admin changes and deletes its projects' quotas.
	s.ok(http.StatusOK, http.MethodPut, fmt.Sprintf("/api/v1/tenants/acme/quotas/%d", vision.ID), ann,
		map[string]any{"project": "vision", "devices": 4, "compute_percent": 400, "policy": "queue"}, nil)
	var nlp quotaOut
	s.ok(http.StatusCreated, http.MethodPost, "/api/v1/tenants/acme/quotas", ann,
		map[string]any{"project": "nlp", "vendor": "nvidia", "devices": 1, "compute_percent": 100}, &nlp)
	s.ok(http.StatusNoContent, http.MethodDelete, fmt.Sprintf("/api/v1/tenants/acme/quotas/%d", nlp.ID), ann, nil, nil)

	// Who else: members read, do not write; other tenants neither.
	require.Len(t, list(bob), before)
	s.fails(http.StatusForbidden, "tenant_forbidden", http.MethodPost, "/api/v1/tenants/acme/quotas", bob, map[string]any{"project": "nlp", "devices": 1})
	s.fails(http.StatusForbidden, "tenant_forbidden", http.MethodGet, "/api/v1/tenants/acme/quotas", gil, nil)
	s.fails(http.StatusForbidden, "forbidden", http.MethodPut, fmt.Sprintf("/api/v1/quotas/%d", all.ID), ann, map[string]any{"tenant": "acme", "devices": 40})
	var globexView struct{ Items []quotaOut }
	s.ok(http.StatusOK, http.MethodGet, "/api/v1/quotas", gil, nil, &globexView)
	require.Empty(t, globexView.Items, "another tenant's quotas are not listed")
	s.fails(http.StatusNotFound, "not_found", http.MethodGet, fmt.Sprintf("/api/v1/quotas/%d", all.ID), gil, nil)
	s.fails(http.StatusNotFound, "quota_not_found", http.MethodPut, fmt.Sprintf("/api/v1/tenants/globex/quotas/%d", vision.ID), admin,
		map[string]any{"project": "vision", "devices": 1})

	// Cluster admins set any quota, above the tenant's too.
	s.ok(http.StatusOK, http.MethodPut, fmt.Sprintf("/api/v1/tenants/acme/quotas/%d", vision.ID), admin,
		map[string]any{"project": "vision", "devices": 8}, nil)

	// Live use: a placed task of vision counts in its quota and the tenant's.
	s.enrollNode(admin, "quota-node", "nvidia", 2)
	s.submit(ann, map[string]any{"name": "train", "command": []string{"true"}, "tenant": "acme", "project": "vision",
		"vendor": "nvidia", "device_count": 1, "compute_percent": 100, "wait_for_nodes": true})
	require.Eventually(t, func() bool {
		used := map[int64]int64{}
		for _, q := range list(bob) {
			if q.Used != nil {
				used[q.ID] = q.Used.Devices
			}
		}
		return used[vision.ID] == 1 && used[all.ID] == 1 && used[nv.ID] == 1
	}, 20*time.Second, 100*time.Millisecond, "the ledger's use shows in the tenant's quotas")
}
