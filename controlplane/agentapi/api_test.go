package agentapi

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/agent/protocol"
	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

func strp(s string) *string { return &s }

func (e *env) enroll(host string) protocol.EnrollResponse {
	e.t.Helper()
	var tok tokenJSON
	require.Equal(e.t, http.StatusCreated, e.call("POST", "/api/v1/bootstrap-tokens", e.adminKey, tokenRequest{Description: "n"}, &tok))
	var out protocol.EnrollResponse
	require.Equal(e.t, http.StatusCreated, e.call("POST", "/api/v1/agents/enroll", "", protocol.EnrollRequest{
		Token: tok.Token, Hostname: host, Inventory: []inventory.Snapshot{{Vendor: "nvidia",
			Devices: []inventory.Device{{Index: 0, UUID: strp("GPU-a"), Model: "H100"}}}}}, &out))
	return out
}

func TestBootstrapTokenIsOneTime(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	var tok tokenJSON
	require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/bootstrap-tokens", e.adminKey, tokenRequest{Description: "rack 3"}, &tok))
	require.True(t, strings.HasPrefix(tok.Token, "hfb_"))
	req := protocol.EnrollRequest{Token: tok.Token, Hostname: "gpu-01.example"}
	var out protocol.EnrollResponse
	require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/agents/enroll", "", req, &out))
	require.True(t, strings.HasPrefix(out.NodeID, "gpu-01-example-"))
	require.True(t, strings.HasPrefix(out.APIKey, "hf_"))
	// Second use is refused; so are unknown tokens and anonymous token admin.
	require.Equal(t, http.StatusUnauthorized, e.call("POST", "/api/v1/agents/enroll", "", req, nil))
	req.Token = "hfb_nope"
	require.Equal(t, http.StatusUnauthorized, e.call("POST", "/api/v1/agents/enroll", "", req, nil))
	require.Equal(t, http.StatusUnauthorized, e.call("GET", "/api/v1/bootstrap-tokens", "", nil, nil))
	// The agent key cannot mint tokens nor manage nodes.
	require.Equal(t, http.StatusForbidden, e.call("POST", "/api/v1/bootstrap-tokens", out.APIKey, tokenRequest{}, nil))
	require.Equal(t, http.StatusForbidden, e.call("POST", "/api/v1/nodes/"+out.NodeID+"/cordon", out.APIKey, nil, nil))
	// The admin's key cannot pose as an agent.
	require.Equal(t, http.StatusForbidden, e.call("POST", "/api/v1/agents/heartbeat", e.adminKey, protocol.Heartbeat{}, nil))

	var toks list[tokenJSON]
	require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/bootstrap-tokens", e.adminKey, nil, &toks))
	require.Equal(t, 1, toks.Total)
	require.Equal(t, out.NodeID, toks.Items[0].NodeID)
	require.NotNil(t, toks.Items[0].UsedAt)
	require.Empty(t, toks.Items[0].Token)
	require.Equal(t, http.StatusNoContent, e.call("DELETE", "/api/v1/bootstrap-tokens/"+itoa(tok.ID), e.adminKey, nil, nil))
	require.Equal(t, http.StatusNotFound, e.call("DELETE", "/api/v1/bootstrap-tokens/"+itoa(tok.ID), e.adminKey, nil, nil))
	require.Equal(t, http.StatusBadRequest, e.call("POST", "/api/v1/bootstrap-tokens", e.adminKey, map[string]any{"ttl_seconds": -5}, nil))
}

func TestHeartbeatOnlineOfflineAndMetrics(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{OfflineAfter: 300 * time.Millisecond})
	n := e.enroll("h1")
	var hr protocol.HeartbeatResponse
	require.Equal(t, http.StatusOK, e.call("POST", "/api/v1/agents/heartbeat", n.APIKey,
		protocol.Heartbeat{Health: "ok", CPUCount: 16, MemoryTotalMiB: 64000, MemoryFreeMiB: 32000, Running: []protocol.RunningTask{}}, &hr))
	require.Equal(t, "online", hr.State)
	require.Equal(t, 1.0, testutil.ToFloat64(e.svc.m.up.WithLabelValues(n.NodeID, "h1")))
	var node nodeJSON
	require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/nodes/"+n.NodeID, e.adminKey, nil, &node))
	require.Equal(t, 16, node.CPUCount)
	require.Equal(t, []string{"nvidia"}, node.Vendors)
	require.Equal(t, 1, node.DeviceCount)
	// Silence → offline and node_up 0.
	waitUntil(t, "node offline", func() bool {
		got, err := e.db.GetNode(context.Background(), n.NodeID)
		return err == nil && got.State == controlplane.NodeOffline
	})
	require.Equal(t, 0.0, testutil.ToFloat64(e.svc.m.up.WithLabelValues(n.NodeID, "h1")))
	var nodes list[nodeJSON]
	require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/nodes?state=offline&vendor=nvidia", e.adminKey, nil, &nodes))
	require.Equal(t, 1, nodes.Total)
	require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/nodes?vendor=ascend", e.adminKey, nil, &nodes))
	require.Equal(t, 0, nodes.Total)
	require.Equal(t, http.StatusBadRequest, e.call("GET", "/api/v1/nodes?state=sleepy", e.adminKey, nil, nil))
}

func TestCordonDrainUncordon(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	n := e.enroll("h2")
	var node nodeJSON
	require.Equal(t, http.StatusOK, e.call("POST", "/api/v1/nodes/"+n.NodeID+"/cordon", e.adminKey, nil, &node))
	require.True(t, node.Cordoned)
	task := e.queuedTask("true")
	_, err := e.svc.Assign(context.Background(), task.ID, n.NodeID, nil)
	require.ErrorIs(t, err, controlplane.ErrConflict)
	require.Equal(t, http.StatusOK, e.call("POST", "/api/v1/nodes/"+n.NodeID+"/drain", e.adminKey, nil, &node))
	require.True(t, node.Draining)
	require.Equal(t, http.StatusOK, e.call("POST", "/api/v1/nodes/"+n.NodeID+"/uncordon", e.adminKey, nil, &node))
	require.False(t, node.Cordoned || node.Draining)
	require.Equal(t, http.StatusNotFound, e.call("POST", "/api/v1/nodes/nope/cordon", e.adminKey, nil, nil))
}

func TestLongPollWakesOnAssign(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	n := e.enroll("h3")
	task := e.queuedTask("sh", "-c", "echo hi")
	got := make(chan protocol.AssignmentList, 1)
	go func() {
		var l protocol.AssignmentList
		e.call("GET", "/api/v1/agents/assignments?wait=30s", n.APIKey, nil, &l)
		got <- l
	}()
	time.Sleep(100 * time.Millisecond) // let the poll start waiting (not an assertion)
	devs := []protocol.DeviceSlice{{Vendor: "nvidia", Index: 0, UUID: "GPU-a"}}
	tk, err := e.svc.Assign(context.Background(), task.ID, n.NodeID, devs)
	require.NoError(t, err)
	require.Equal(t, controlplane.TaskScheduled, tk.State)
	require.Equal(t, n.NodeID, tk.NodeID)
	var l protocol.AssignmentList
	select {
	case l = <-got:
	case <-time.After(20 * time.Second):
		t.Fatal("long-poll did not return after Assign")
	}
	require.Len(t, l.Items, 1)
	require.Equal(t, protocol.KindRun, l.Items[0].Kind)
	require.Equal(t, devs, l.Items[0].Task.Devices)
	require.Equal(t, []string{"sh", "-c", "echo hi"}, l.Items[0].Task.Command)

	// Status: started, then succeeded; a resend of both is a no-op.
	ups := []protocol.StatusUpdate{
		{Seq: 1, TaskID: task.ID, Phase: protocol.PhaseStarted, At: time.Now()},
		{Seq: 2, TaskID: task.ID, Phase: protocol.PhaseSucceeded, ExitCode: new(int), At: time.Now()},
	}
	var ack protocol.StatusAck
	require.Equal(t, http.StatusOK, e.call("POST", "/api/v1/agents/status", n.APIKey, protocol.StatusBatch{Updates: ups[:1]}, &ack))
	require.Equal(t, uint64(1), ack.Acked)
	require.Equal(t, http.StatusOK, e.call("POST", "/api/v1/agents/status", n.APIKey, protocol.StatusBatch{Updates: ups}, &ack))
	require.Equal(t, uint64(2), ack.Acked)
	require.Equal(t, http.StatusOK, e.call("POST", "/api/v1/agents/status", n.APIKey, protocol.StatusBatch{Updates: ups}, &ack))
	require.Equal(t, uint64(2), ack.Acked)
	final, err := e.db.GetTask(context.Background(), task.ID)
	require.NoError(t, err)
	require.Equal(t, controlplane.TaskSucceeded, final.State)
	evs, err := e.db.ListTaskEvents(context.Background(), task.ID)
	require.NoError(t, err)
	require.Len(t, evs, 5) // created, →queued, →scheduled, →running, →succeeded: once each (duplicates ignored)

	// Nothing left to deliver: an immediate poll is empty.
	require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/agents/assignments?wait=0", n.APIKey, nil, &l))
	require.Empty(t, l.Items)
	require.Equal(t, http.StatusBadRequest, e.call("GET", "/api/v1/agents/assignments?wait=soon", n.APIKey, nil, nil))
}

func TestCancelReachesAgentThroughSweep(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	n := e.enroll("h4")
	task := e.queuedTask("sleep", "600")
	_, err := e.svc.Assign(context.Background(), task.ID, n.NodeID, nil)
	require.NoError(t, err)
	var ack protocol.StatusAck
	e.call("POST", "/api/v1/agents/status", n.APIKey, protocol.StatusBatch{Updates: []protocol.StatusUpdate{
		{Seq: 1, TaskID: task.ID, Phase: protocol.PhaseStarted}}}, &ack)
	// The task API cancels it (as POST /tasks/{id}/cancel does).
	_, err = e.db.TransitionTask(context.Background(), controlplane.Transition{TaskID: task.ID,
		From: controlplane.TaskRunning, To: controlplane.TaskCancelled, Actor: "admin"})
	require.NoError(t, err)
	var l protocol.AssignmentList
	require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/agents/assignments?wait=20s", n.APIKey, nil, &l))
	require.Len(t, l.Items, 1)
	require.Equal(t, protocol.KindCancel, l.Items[0].Kind)
	require.Equal(t, task.ID, l.Items[0].TaskID)
	// The agent reports the kill: the cancel item closes and no second one comes.
	e.call("POST", "/api/v1/agents/status", n.APIKey, protocol.StatusBatch{Updates: []protocol.StatusUpdate{
		{Seq: 2, TaskID: task.ID, Phase: protocol.PhaseCancelled}}}, &ack)
	time.Sleep(1500 * time.Millisecond) // one sweep period
	require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/agents/assignments?wait=0", n.APIKey, nil, &l))
	require.Empty(t, l.Items)
}

func TestManagementRoundTrip(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	n := e.enroll("h5")
	// A minimal agent: answer management commands from the long-poll.
	go func() {
		seq := uint64(0)
		for i := 0; i < 2; i++ {
			var l protocol.AssignmentList
			e.call("GET", "/api/v1/agents/assignments?wait=20s", n.APIKey, nil, &l)
			for _, it := range l.Items {
				seq++
				res := &protocol.ManagementResult{ID: it.ID, OK: true, Output: []byte(`{"echo":"` + it.Manage.Command + `"}`)}
				e.call("POST", "/api/v1/agents/status", n.APIKey, protocol.StatusBatch{Updates: []protocol.StatusUpdate{
					{Seq: seq, Phase: protocol.PhaseManaged, AssignmentID: it.ID, Result: res}}}, &protocol.StatusAck{})
			}
		}
	}()
	var m managementJSON
	require.Equal(t, http.StatusOK, e.call("POST", "/api/v1/nodes/"+n.NodeID+"/agent-status?wait=20s", e.adminKey, nil, &m))
	require.True(t, m.Done)
	require.Contains(t, string(m.Result), `agent-status`)
	// Commands queue work on the node: a GET (a prefetch, a crawler) must not.
	require.Equal(t, http.StatusMethodNotAllowed, e.call("GET", "/api/v1/nodes/"+n.NodeID+"/agent-status", e.adminKey, nil, nil))
	require.Equal(t, http.StatusOK, e.call("POST", "/api/v1/nodes/"+n.NodeID+"/config?wait=20s", e.adminKey,
		map[string]any{"heartbeat_interval": "5s"}, &m))
	require.True(t, m.Done)
	require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/nodes/"+n.NodeID+"/management/"+itoa(m.ID), e.adminKey, nil, &m))
	require.Equal(t, "config", m.Command)
	require.Equal(t, http.StatusBadRequest, e.call("POST", "/api/v1/nodes/"+n.NodeID+"/config", e.adminKey, []int{1}, nil))
}

func TestTaskLogsShipAndRead(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	n := e.enroll("h6")
	other := e.enroll("h7")
	task := e.queuedTask("echo")
	_, err := e.svc.Assign(context.Background(), task.ID, n.NodeID, nil)
	require.NoError(t, err)
	chunks := []protocol.LogChunk{{TaskID: task.ID, Stream: "stdout", Offset: 0, Data: "hello "},
		{TaskID: task.ID, Stream: "stdout", Offset: 6, Data: "world\n"}}
	require.Equal(t, http.StatusNoContent, e.call("POST", "/api/v1/agents/logs", n.APIKey, protocol.LogBatch{Chunks: chunks}, nil))
	require.Equal(t, http.StatusNoContent, e.call("POST", "/api/v1/agents/logs", n.APIKey, protocol.LogBatch{Chunks: chunks}, nil))
	require.Equal(t, http.StatusForbidden, e.call("POST", "/api/v1/agents/logs", other.APIKey, protocol.LogBatch{Chunks: chunks}, nil))
	var lg taskLogJSON
	require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/tasks/"+itoa(task.ID)+"/logs", e.adminKey, nil, &lg))
	require.Equal(t, "hello world\n", lg.Data)
	require.Equal(t, int64(12), lg.Next)
	require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/tasks/"+itoa(task.ID)+"/logs?offset=8", e.adminKey, nil, &lg))
	require.Equal(t, "rld\n", lg.Data)
	require.Equal(t, http.StatusBadRequest, e.call("GET", "/api/v1/tasks/"+itoa(task.ID)+"/logs?stream=x", e.adminKey, nil, nil))
}

func itoa(i int64) string { return strconvI(i) }
