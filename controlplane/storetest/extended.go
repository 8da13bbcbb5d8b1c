package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// FullStore is a store with the node and scheduling persistence as well
// (controlplane.NodeStore, controlplane.SchedulingStore).
type FullStore interface {
	controlplane.Store
	controlplane.NodeStore
	controlplane.SchedulingStore
	controlplane.AlertStore
}

// FullOpener returns a fresh, empty FullStore and registers its Close with
// t.Cleanup.
type FullOpener func(t *testing.T) FullStore

// RunExtended runs the conformance suites of NodeStore and SchedulingStore.
func RunExtended(t *testing.T, open FullOpener) {
	groups := []struct {
		name string
		run  func(t *testing.T, open FullOpener)
	}{
		{"BootstrapTokens", testBootstrapTokens},
		{"Enroll", testEnroll},
		{"Heartbeats", testHeartbeats},
		{"ListNodes", testListNodes},
		{"NodeListInventories", testNodeListInventories},
		{"Assignments", testAssignments},
		{"ApplyNodeStatus", testApplyNodeStatus},
		{"RunsToStop", testRunsToStop},
		{"TaskLogs", testTaskLogs},
		{"ListTasksByState", testListTasksByState},
		{"ListTasksByStateAfterChanges", testListTasksByStateAfterChanges},
		{"BindTasks", testBindTasks},
		{"BindTasksBatch", testBindTasksBatch},
		{"TransitionTasks", testTransitionTasks},
		{"AdmitAndBind", testAdmitAndBind},
		{"RequeueAndRelease", testRequeueAndRelease},
		{"Quotas", testQuotas},
		{"PluginSettings", testPluginSettings},
		{"Retryable", testRetryable},
		{"TaskSchedule", testTaskSchedule},
		{"Lease", testLease},
		{"Races", testRacesExt},
		{"AlertRules", testAlertRules},
		{"AlertInstances", testAlertInstances},
		{"AlertStats", testAlertStats},
		{"Silences", testSilences},
		{"ChannelsOutbox", testChannelsOutbox},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			g.run(t, open)
		})
	}
}

// mkToken stores a bootstrap token valid for an hour and returns its hash.
func mkToken(t *testing.T, s FullStore) string {
	t.Helper()
	hash := fmt.Sprintf("hash-%d", uniq())
	tok := &controlplane.BootstrapToken{Prefix: hash[:6], TokenHash: hash, Description: "test",
		ExpiresAt: time.Now().Add(time.Hour)}
	require.NoError(t, s.CreateBootstrapToken(ctx(t), tok))
	return hash
}

// sampleInventory is one NVIDIA snapshot with devices and one Ascend
// snapshot without (devices JSON null).
func sampleInventory() []inventory.Snapshot {
	drv := "550.54"
	mem := int64(81920)
	util := 12.5
	return []inventory.Snapshot{
		{Vendor: "nvidia", DriverVersion: &drv, Devices: []inventory.Device{
			{Index: 0, Model: "H100", MemoryTotalMiB: &mem, UtilizationPercent: &util},
			{Index: 1, Model: "H100", MemoryTotalMiB: &mem},
		}},
		{Vendor: "ascend"},
	}
}

// mkNode enrolls a node with sampleInventory.
func mkNode(t *testing.T, s FullStore, mut func(*controlplane.Node)) *controlplane.Node {
	t.Helper()
	id := fmt.Sprintf("node-%d", uniq())
	n := &controlplane.Node{ID: id, Hostname: "host-" + id, OS: "linux", Arch: "amd64", Version: "1.0",
		Labels: map[string]string{"zone": "a"}, CPUCount: 64, MemoryTotalMiB: 512000, MemoryFreeMiB: 400000,
		Inventory: sampleInventory(), APIKeyPrefix: "hfk_" + id}
	if mut != nil {
		mut(n)
	}
	require.NoError(t, s.EnrollNode(ctx(t), mkToken(t, s), n))
	return n
}

// queuedTask creates a task and moves it to queued.
func queuedTask(t *testing.T, s FullStore, mut func(*controlplane.TaskSpec)) *controlplane.Task {
	t.Helper()
	task := mkTask(t, s, 0, mut)
	return move(t, s, task.ID, controlplane.TaskQueued)
}

// assign places a queued task on node with a run assignment.
func assign(t *testing.T, s FullStore, task *controlplane.Task, node string) (*controlplane.Task, *controlplane.Assignment) {
	t.Helper()
	a := &controlplane.Assignment{NodeID: node, Kind: controlplane.AssignRun, TaskID: task.ID, Payload: []byte(`{"task":1}`)}
	got, err := s.AssignTask(ctx(t), a, controlplane.Transition{TaskID: task.ID, From: controlplane.TaskQueued,
		To: controlplane.TaskScheduled, NodeID: &node, Actor: "scheduler"})
	require.NoError(t, err)
	return got, a
}
