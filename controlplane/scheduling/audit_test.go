package scheduling

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// TestDecisionsAudited: a placement is audited with its node, slices and
// the winner's score per plugin; a task that fits nowhere is
// audited once, on its first cycle, however often it is retried.
func TestDecisionsAudited(t *testing.T) {
	h := newHarness(t, Config{})
	h.addNode("a", inventory.VendorNVIDIA, "A100-SXM4-80GB", 2, 81920)
	h.addNode("b", inventory.VendorNVIDIA, "A100-SXM4-80GB", 2, 81920)
	fits := h.submit(controlplane.TaskSpec{Name: "fits", DeviceCount: 1, ComputePercent: 50, QoS: controlplane.QoSSilver})
	never := h.submit(controlplane.TaskSpec{Name: "never", DeviceCount: 4, QoS: controlplane.QoSSilver})
	var gang []*controlplane.Task
	for i := 0; i < 2; i++ {
		gang = append(gang, h.submit(controlplane.TaskSpec{Name: "g", DeviceCount: 1, QoS: controlplane.QoSSilver,
			Gang: "pair", GangSize: 2}))
	}
	for i := 0; i < 5; i++ {
		h.step()
	}
	byTarget := map[string][]*controlplane.AuditEntry{}
	h.auditMu.Lock()
	for _, e := range h.audited {
		byTarget[e.Target] = append(byTarget[e.Target], e)
	}
	h.auditMu.Unlock()

	placed := byTarget["task/"+strconv.FormatInt(fits.ID, 10)]
	require.Len(t, placed, 1)
	require.Equal(t, "task.scheduled", placed[0].Action)
	require.Equal(t, controlplane.ModuleScheduler, placed[0].Module)
	var det decisionDetail
	require.NoError(t, json.Unmarshal([]byte(placed[0].Detail), &det))
	require.Equal(t, h.task(fits.ID).NodeID, det.Node)
	require.Len(t, det.Slices, 1)
	require.Positive(t, det.Score)
	require.Contains(t, det.Scores, "Fragmentation")
	require.Contains(t, det.Scores, "BinPack")

	refused := byTarget["task/"+strconv.FormatInt(never.ID, 10)]
	require.Len(t, refused, 1, "retries of a waiting task are not re-audited")
	require.Equal(t, "task.unschedulable", refused[0].Action)
	require.Equal(t, controlplane.LevelWarn, refused[0].Level)
	require.Contains(t, refused[0].Detail, "0/2 nodes are available")

	// A gang's first member is reserved and held (waiting); the member that
	// completes the gang is scheduled, and both are bound.
	first := byTarget["task/"+strconv.FormatInt(gang[0].ID, 10)]
	second := byTarget["task/"+strconv.FormatInt(gang[1].ID, 10)]
	require.Len(t, first, 1)
	require.Equal(t, "task.waiting", first[0].Action)
	require.Len(t, second, 1)
	require.Equal(t, "task.scheduled", second[0].Action)
	require.NotEmpty(t, h.task(gang[0].ID).NodeID)
	require.NotEmpty(t, h.task(gang[1].ID).NodeID)
}
