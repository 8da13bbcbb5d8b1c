package agentapi

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/agent/protocol"
	"github.com/heteroflow/heteroflow/controlplane"
)

// TestTaskOutputsWithTheEnd: outputs sent with a task's end are stored
// before the end is applied; another node's claim, or values over the
// limits, are dropped without blocking the node's status queue.
func TestTaskOutputsWithTheEnd(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	a, b := e.enroll("out-a"), e.enroll("out-b")
	task := e.queuedTask("sh", "-c", "true")
	_, err := e.svc.Assign(context.Background(), task.ID, a.NodeID, nil)
	require.NoError(t, err)
	outputs := func() (map[string]string, error) {
		return e.db.(controlplane.WorkflowStore).GetTaskOutputs(context.Background(), task.ID, 0)
	}

	var ack protocol.StatusAck
	// Node b claims outputs for a's task: dropped, its sequence still acked.
	require.Equal(t, http.StatusOK, e.call("POST", "/api/v1/agents/status", b.APIKey, protocol.StatusBatch{Updates: []protocol.StatusUpdate{
		{Seq: 1, TaskID: task.ID, Phase: protocol.PhaseSucceeded, ExitCode: new(int), Outputs: map[string]string{"forged": "1"}}}}, &ack))
	require.Equal(t, uint64(1), ack.Acked)
	_, err = outputs()
	require.ErrorIs(t, err, controlplane.ErrNotFound)

	// Too long a value: dropped; the end itself is applied.
	require.Equal(t, http.StatusOK, e.call("POST", "/api/v1/agents/status", a.APIKey, protocol.StatusBatch{Updates: []protocol.StatusUpdate{
		{Seq: 1, TaskID: task.ID, Phase: protocol.PhaseStarted},
		{Seq: 2, TaskID: task.ID, Phase: protocol.PhaseStarted, Outputs: map[string]string{"big": strings.Repeat("x", protocol.MaxOutputValue+1)}},
	}}, &ack))
	require.Equal(t, uint64(2), ack.Acked)
	_, err = outputs()
	require.ErrorIs(t, err, controlplane.ErrNotFound)

	require.Equal(t, http.StatusOK, e.call("POST", "/api/v1/agents/status", a.APIKey, protocol.StatusBatch{Updates: []protocol.StatusUpdate{
		{Seq: 3, TaskID: task.ID, Phase: protocol.PhaseSucceeded, ExitCode: new(int), Outputs: map[string]string{"accuracy": "0.93"}}}}, &ack))
	require.Equal(t, uint64(3), ack.Acked)
	got, err := outputs()
	require.NoError(t, err)
	require.Equal(t, map[string]string{"accuracy": "0.93"}, got)
	final, err := e.db.GetTask(context.Background(), task.ID)
	require.NoError(t, err)
	require.Equal(t, controlplane.TaskSucceeded, final.State)
}
