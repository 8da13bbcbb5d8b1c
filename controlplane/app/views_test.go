package app

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// summary is GET /api/v1/scheduler/summary.
type summary struct {
	GPUs      map[string]int   `json:"gpus"`
	MemoryMiB map[string]int64 `json:"memory_mib"`
	SliceUtil *float64         `json:"slice_utilization"`
	Nodes     struct {
		Total      int            `json:"total"`
		Online     int            `json:"online"`
		OnlineRate *float64       `json:"online_rate"`
		Health     map[string]int `json:"health"`
	} `json:"nodes"`
	Tasks          map[string]int `json:"tasks"`
	CompletionRate *float64       `json:"task_completion_rate"`
	Fragmentation  map[string]any `json:"fragmentation"`
	Scheduler      struct {
		Leader   bool   `json:"leader"`
		Holder   string `json:"holder"`
		LastTick string `json:"last_tick"`
	} `json:"scheduler"`
}

// slices is GET /api/v1/slices.
type slices struct {
	Items []struct {
		Node         string `json:"node"`
		Hostname     string `json:"hostname"`
		Online       bool   `json:"online"`
		Vendor       string `json:"vendor"`
		Model        string `json:"model"`
		Index        int    `json:"index"`
		MemoryMiB    int64  `json:"memory_mib"`
		AllocatedMiB int64  `json:"allocated_memory_mib"`
		AllocatedPct int    `json:"allocated_compute_percent"`
		FreePct      int    `json:"free_compute_percent"`
		State        string `json:"state"`
		Slices       []struct {
			TaskID         int64  `json:"task_id"`
			QoS            string `json:"qos"`
			ComputePercent int    `json:"compute_percent"`
		} `json:"slices"`
	} `json:"items"`
	Total         int            `json:"total"`
	Fragmentation float64        `json:"fragmentation_score"`
	Devices       map[string]int `json:"devices"`
}

// TestSummaryAndSlices: an idle node, then a task placed on it by the
// live scheduler, as the dashboard and the slices page read them.
func TestSummaryAndSlices(t *testing.T) {
	s := startServer(t, t.TempDir())
	admin := s.adminToken()
	node, _ := s.enrollNode(admin, "views-node", "nvidia", 2)

	var sum summary
	require.Eventually(t, func() bool {
		s.ok(http.StatusOK, http.MethodGet, "/api/v1/scheduler/summary", admin, nil, &sum)
		return sum.Scheduler.Leader
	}, 20*time.Second, 50*time.Millisecond, "this server never became the scheduler leader")
	require.NotEmpty(t, sum.Scheduler.Holder)
	require.Equal(t, map[string]int{"total": 2, "online": 2, "busy": 0}, sum.GPUs)
	require.Equal(t, map[string]int64{"total": 2 * 81920, "free": 2 * 81920}, sum.MemoryMiB)
	require.NotNil(t, sum.SliceUtil)
	require.Zero(t, *sum.SliceUtil)
	require.Equal(t, 1, sum.Nodes.Total)
	require.Equal(t, 1, sum.Nodes.Online)
	require.Equal(t, map[string]int{"ok": 1}, sum.Nodes.Health)
	require.Nil(t, sum.CompletionRate, "no task ended yet: unknown, not 0")
	for _, st := range []string{"submitted", "queued", "scheduled", "running", "succeeded", "failed", "cancelled"} {
		require.Contains(t, sum.Tasks, st)
	}
	for _, k := range []string{"score", "free", "fragmented", "allocated"} {
		require.Contains(t, sum.Fragmentation, k)
	}

	var sl slices
	s.ok(http.StatusOK, http.MethodGet, "/api/v1/slices", admin, nil, &sl)
	require.Equal(t, 2, sl.Total)
	require.Equal(t, map[string]int{"free": 2, "fragmented": 0, "allocated": 0}, sl.Devices)
	for _, d := range sl.Items {
		require.Equal(t, node, d.Node)
		require.Equal(t, "views-node", d.Hostname)
		require.True(t, d.Online)
		require.Equal(t, "nvidia", d.Vendor)
		require.Equal(t, "free", d.State)
		require.Equal(t, 100, d.FreePct)
		require.NotNil(t, d.Slices, "slices is [] when empty, never null")
		require.Empty(t, d.Slices)
	}

	// A half-device task: the scheduler binds it, the views show it.
	id := s.submit(admin, map[string]any{"name": "half", "command": []string{"true"}, "vendor": "nvidia",
		"device_count": 1, "compute_percent": 50, "memory_mib": 1024})
	require.Eventually(t, func() bool {
		s.ok(http.StatusOK, http.MethodGet, "/api/v1/slices", admin, nil, &sl)
		return sl.Devices["fragmented"] == 1
	}, 20*time.Second, 50*time.Millisecond, "the task was never placed: %+v", sl)
	var placed int
	for _, d := range sl.Items {
		if d.State != "fragmented" {
			continue
		}
		placed++
		require.Len(t, d.Slices, 1)
		require.Equal(t, id, d.Slices[0].TaskID)
		require.Equal(t, 50, d.Slices[0].ComputePercent)
		require.Equal(t, 50, d.AllocatedPct)
		require.Equal(t, int64(1024), d.AllocatedMiB)
	}
	require.Equal(t, 1, placed)
	require.Positive(t, sl.Fragmentation)

	s.ok(http.StatusOK, http.MethodGet, "/api/v1/scheduler/summary", admin, nil, &sum)
	require.Equal(t, 1, sum.GPUs["busy"])
	require.Equal(t, 2*81920-int64(1024), sum.MemoryMiB["free"])
	require.InDelta(t, 0.25, *sum.SliceUtil, 1e-9, "50% of one of two devices")
}

// TestDefragAPI: the plan is readable by viewers (GET) and by a dry-run
// POST; executing is refused while the configuration does not allow it.
func TestDefragAPI(t *testing.T) {
	s := startServer(t, t.TempDir())
	admin := s.adminToken()
	_, viewer := s.userWithRole(admin, "viewer1", "viewer")
	s.enrollNode(admin, "defrag-node", "nvidia", 2)

	type planAnswer struct {
		Plan struct {
			ScoreBefore *float64 `json:"score_before"`
			ScoreAfter  *float64 `json:"score_after"`
			Freed       []any    `json:"freed"`
		} `json:"plan"`
		ExecuteAllowed *bool `json:"execute_allowed"`
		Requeued       []any `json:"requeued"`
	}
	for _, tc := range []struct {
		name, method, cred string
		body               any
	}{
		{"GET as viewer", http.MethodGet, viewer, nil},
		{"POST without execute", http.MethodPost, admin, map[string]any{}},
		{"POST execute false", http.MethodPost, admin, map[string]any{"execute": false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p planAnswer
			s.ok(http.StatusOK, tc.method, "/api/v1/scheduler/defrag", tc.cred, tc.body, &p)
			require.NotNil(t, p.Plan.ScoreBefore)
			require.NotNil(t, p.Plan.ScoreAfter)
			require.NotNil(t, p.ExecuteAllowed)
			require.False(t, *p.ExecuteAllowed, "the server's default configuration forbids moves")
			require.Nil(t, p.Requeued, "a dry run moves nothing")
		})
	}
	msg := s.fails(http.StatusForbidden, "forbidden", http.MethodPost, "/api/v1/scheduler/defrag", admin, map[string]any{"execute": true})
	require.Contains(t, msg, "allow_defrag")
	s.fails(http.StatusBadRequest, "invalid_argument", http.MethodPost, "/api/v1/scheduler/defrag", admin, map[string]any{"execute": "yes"})
	s.fails(http.StatusForbidden, "forbidden", http.MethodPost, "/api/v1/scheduler/defrag", viewer, map[string]any{})
}
