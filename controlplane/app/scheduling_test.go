package app

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// quota is the contract's Quota JSON.
type quota struct {
	ID             int64  `json:"id"`
	Tenant         string `json:"tenant"`
	Project        string `json:"project"`
	Vendor         string `json:"vendor"`
	Devices        int64  `json:"devices"`
	MemoryMiB      int64  `json:"memory_mib"`
	ComputePercent int64  `json:"compute_percent"`
	Policy         string `json:"policy"`
	Used           *struct {
		Devices        int64 `json:"devices"`
		MemoryMiB      int64 `json:"memory_mib"`
		ComputePercent int64 `json:"compute_percent"`
	} `json:"used"`
}

func TestQuotasAPI(t *testing.T) {
	s := startServer(t, t.TempDir())
	admin := s.adminToken()

	s.ok(http.StatusCreated, http.MethodPost, "/api/v1/tenants", admin, map[string]string{"name": "lab"}, nil)
	s.ok(http.StatusCreated, http.MethodPost, "/api/v1/tenants/lab/projects", admin, map[string]string{"name": "vision"}, nil)
	var q quota
	s.ok(http.StatusCreated, http.MethodPost, "/api/v1/quotas", admin,
		map[string]any{"tenant": "lab", "vendor": "nvidia", "devices": 4, "memory_mib": 81920}, &q)
	require.Positive(t, q.ID)
	require.Equal(t, "queue", q.Policy, "policy defaults to queue")
	require.Equal(t, int64(4), q.Devices)
	path := fmt.Sprintf("/api/v1/quotas/%d", q.ID)

	var got quota
	s.ok(http.StatusOK, http.MethodGet, path, admin, nil, &got)
	require.Equal(t, "lab", got.Tenant)
	require.NotNil(t, got.Used, "GET by id carries current use")
	require.Zero(t, got.Used.Devices)

	s.ok(http.StatusOK, http.MethodPut, path, admin,
		map[string]any{"tenant": "lab", "vendor": "nvidia", "devices": 8, "policy": "refuse"}, &got)
	require.Equal(t, int64(8), got.Devices)
	require.Equal(t, "refuse", got.Policy)

	var list struct {
		Items []quota `json:"items"`
		Total int     `json:"total"`
	}
	s.ok(http.StatusOK, http.MethodGet, "/api/v1/quotas", admin, nil, &list)
	require.Equal(t, 1, list.Total)
	require.Equal(t, int64(8), list.Items[0].Devices)
	require.NotNil(t, list.Items[0].Used, "list items carry current use")

	for _, tc := range []struct {
		name, method, path string
		body               any
		status             int
		code               string
	}{
		{"no tenant", http.MethodPost, "/api/v1/quotas", map[string]any{"devices": 1}, 400, "invalid_argument"},
		{"negative limit", http.MethodPost, "/api/v1/quotas", map[string]any{"tenant": "x", "devices": -1}, 400, "invalid_argument"},
		{"unknown policy", http.MethodPost, "/api/v1/quotas", map[string]any{"tenant": "x", "policy": "maybe"}, 400, "invalid_argument"},
		{"unknown field", http.MethodPost, "/api/v1/quotas", map[string]any{"tenant": "x", "gpus": 1}, 400, "invalid_argument"},
		{"wrong type", http.MethodPost, "/api/v1/quotas", map[string]any{"tenant": "x", "devices": "four"}, 400, "invalid_argument"},
		{"duplicate scope", http.MethodPost, "/api/v1/quotas", map[string]any{"tenant": "lab", "vendor": "nvidia"}, 409, "conflict"},
		// A quota bounds tasks, and a task names only existing tenants and projects.
		{"tenant that does not exist", http.MethodPost, "/api/v1/quotas", map[string]any{"tenant": "ghost", "devices": 1}, 400, "tenant_not_found"},
		{"project that does not exist", http.MethodPost, "/api/v1/quotas", map[string]any{"tenant": "lab", "project": "ghost", "devices": 1}, 400, "quota_project_not_found"},
		{"put onto a tenant that does not exist", http.MethodPut, path, map[string]any{"tenant": "ghost", "devices": 1}, 400, "tenant_not_found"},
		{"bad id", http.MethodGet, "/api/v1/quotas/abc", nil, 400, "invalid_argument"},
		{"missing", http.MethodGet, "/api/v1/quotas/999", nil, 404, "not_found"},
		{"put invalid", http.MethodPut, path, map[string]any{"tenant": ""}, 400, "invalid_argument"},
		{"put missing", http.MethodPut, "/api/v1/quotas/999", map[string]any{"tenant": "x"}, 404, "not_found"},
		{"delete missing", http.MethodDelete, "/api/v1/quotas/999", nil, 404, "not_found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.fails(tc.status, tc.code, tc.method, tc.path, admin, tc.body)
		})
	}

	s.ok(http.StatusNoContent, http.MethodDelete, path, admin, nil, nil)
	s.fails(http.StatusNotFound, "not_found", http.MethodGet, path, admin, nil)
}

// plugin is one entry of GET /api/v1/plugins.
type plugin struct {
	Name     string   `json:"name"`
	Enabled  bool     `json:"enabled"`
	Weight   float64  `json:"weight"`
	Position int      `json:"position"`
	Points   []string `json:"extension_points"`
	Assign   bool     `json:"assign"`
}

type pluginList struct {
	Profile string   `json:"profile"`
	Items   []plugin `json:"items"`
}

func (l pluginList) byName(t *testing.T, name string) plugin {
	t.Helper()
	for _, p := range l.Items {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("plugin %s not listed in %+v", name, l.Items)
	return plugin{}
}

func (l pluginList) names() []string {
	out := make([]string, len(l.Items))
	for i, p := range l.Items {
		out[i] = p.Name
	}
	return out
}

// TestPluginsAPI changes plugins through the API and reads them back after
// a restart on the same data dir.
func TestPluginsAPI(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	admin := s.adminToken()

	var l pluginList
	s.ok(http.StatusOK, http.MethodGet, "/api/v1/plugins", admin, nil, &l)
	require.Equal(t, "live", l.Profile)
	require.NotEmpty(t, l.Items)
	assign := ""
	for i, p := range l.Items {
		require.Equal(t, i, p.Position, "items come in profile order")
		require.NotEmpty(t, p.Points, p.Name)
		if p.Assign {
			assign = p.Name
		}
	}
	require.NotEmpty(t, assign, "one plugin picks devices")
	topo := l.byName(t, "Topology")
	require.True(t, topo.Enabled)

	for _, tc := range []struct {
		name, method, path string
		body               any
		status             int
		code               string
	}{
		{"unknown plugin", http.MethodPatch, "/api/v1/plugins/NoSuchPlugin", map[string]any{"weight": 2}, 404, "not_found"},
		{"negative weight", http.MethodPatch, "/api/v1/plugins/Topology", map[string]any{"weight": -1}, 400, "invalid_argument"},
		{"weight too large", http.MethodPatch, "/api/v1/plugins/Topology", map[string]any{"weight": 2e6}, 400, "invalid_argument"},
		{"weight not a number", http.MethodPatch, "/api/v1/plugins/Topology", map[string]any{"weight": "heavy"}, 400, "invalid_argument"},
		{"unknown field", http.MethodPatch, "/api/v1/plugins/Topology", map[string]any{"priority": 1}, 400, "invalid_argument"},
		{"disable the assigner", http.MethodPatch, "/api/v1/plugins/" + assign, map[string]any{"enabled": false}, 400, "invalid_argument"},
		{"order missing one", http.MethodPut, "/api/v1/plugins/order", map[string]any{"order": l.names()[1:]}, 400, "invalid_argument"},
		{"order repeats one", http.MethodPut, "/api/v1/plugins/order",
			map[string]any{"order": append(l.names()[1:], l.names()[1])}, 400, "invalid_argument"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.fails(tc.status, tc.code, tc.method, tc.path, admin, tc.body)
		})
	}

	var after pluginList
	s.ok(http.StatusOK, http.MethodPatch, "/api/v1/plugins/Topology", admin, map[string]any{"weight": 7.5, "enabled": false}, &after)
	got := after.byName(t, "Topology")
	require.False(t, got.Enabled)
	require.Equal(t, 7.5, got.Weight)

	// Swap the first two plugins.
	order := l.names()
	order[0], order[1] = order[1], order[0]
	s.ok(http.StatusOK, http.MethodPut, "/api/v1/plugins/order", admin, map[string]any{"order": order}, &after)
	require.Equal(t, order, after.names())

	// Settings live in the store, not in the process.
	s.stop()
	s = startServer(t, dir)
	admin = s.adminToken()
	var reread pluginList
	s.ok(http.StatusOK, http.MethodGet, "/api/v1/plugins", admin, nil, &reread)
	require.Equal(t, order, reread.names())
	got = reread.byName(t, "Topology")
	require.False(t, got.Enabled)
	require.Equal(t, 7.5, got.Weight)
}

// why is GET /api/v1/tasks/{id}/why.
type why struct {
	TaskID      int64  `json:"task_id"`
	State       string `json:"state"`
	Pending     bool   `json:"pending"`
	LastAttempt *struct {
		Summary    string         `json:"summary"`
		NeverFits  string         `json:"never_fits"`
		TotalNodes int            `json:"total_nodes"`
		ByReason   map[string]int `json:"by_reason"`
		Nodes      []struct {
			Node   string `json:"node"`
			Plugin string `json:"plugin"`
			Reason string `json:"reason"`
		} `json:"nodes"`
		Attempts int `json:"attempts"`
	} `json:"last_attempt"`
}

// submit posts a task and returns its id.
func (s *testServer) submit(cred string, spec map[string]any) int64 {
	s.t.Helper()
	var task struct {
		ID int64 `json:"id"`
	}
	s.ok(http.StatusCreated, http.MethodPost, "/api/v1/tasks", cred, spec, &task)
	return task.ID
}

// TestWhyPending: a task asking for a vendor no node has is refused at
// submit time (never_fits) unless it asks to wait for nodes; then it stays
// pending, and why names the node that refused it, the reason, and that it
// never fits (rather than waiting for busy devices).
func TestWhyPending(t *testing.T) {
	s := startServer(t, t.TempDir())
	admin := s.adminToken()
	node, _ := s.enrollNode(admin, "why-node", "nvidia", 2)
	spec := map[string]any{"name": "wants-biren", "command": []string{"true"}, "vendor": "biren", "device_count": 1, "compute_percent": 100}
	s.fails(http.StatusBadRequest, "never_fits", http.MethodPost, "/api/v1/tasks", admin, spec)
	spec["wait_for_nodes"] = true
	id := s.submit(admin, spec)

	var w why
	require.Eventually(t, func() bool {
		s.ok(http.StatusOK, http.MethodGet, fmt.Sprintf("/api/v1/tasks/%d/why", id), admin, nil, &w)
		// The scheduler re-reads nodes every second: an attempt made
		// before it saw the node reports an empty cluster; wait for one
		// that judged the node.
		return w.LastAttempt != nil && w.LastAttempt.TotalNodes > 0
	}, 20*time.Second, 50*time.Millisecond, "the scheduler never recorded an attempt that saw the node")
	require.Equal(t, id, w.TaskID)
	require.True(t, w.Pending, "state %s", w.State)
	require.NotEmpty(t, w.LastAttempt.Summary)
	require.Equal(t, 1, w.LastAttempt.TotalNodes)
	require.NotEmpty(t, w.LastAttempt.ByReason)
	require.Len(t, w.LastAttempt.Nodes, 1)
	require.Equal(t, node, w.LastAttempt.Nodes[0].Node)
	require.Equal(t, "GPUType", w.LastAttempt.Nodes[0].Plugin)
	require.NotEmpty(t, w.LastAttempt.Nodes[0].Reason)
	require.Contains(t, w.LastAttempt.NeverFits, "no node in the cluster has biren devices")

	s.fails(http.StatusNotFound, "not_found", http.MethodGet, "/api/v1/tasks/999/why", admin, nil)
	s.fails(http.StatusBadRequest, "invalid_argument", http.MethodGet, "/api/v1/tasks/x/why", admin, nil)
}
