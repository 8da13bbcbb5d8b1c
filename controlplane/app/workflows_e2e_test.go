//go:build unix

package app

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	stdslices "slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/agent/agenttest"
	"github.com/heteroflow/heteroflow/agent/daemon"
	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/httpapi"
	"github.com/heteroflow/heteroflow/receivers/fakesmi"
	"github.com/heteroflow/heteroflow/receivers/smi"
)

// simNode is a node agent whose vendor CLIs are simulated in process
// (fakesmi), as `make run` simulates them: inventory and isolation calls
// answer like the vendor's tool, tasks are real processes.
type simNode struct{ opts fakesmi.Options }

func (n *simNode) Run(_ context.Context, name string, args ...string) ([]byte, error) {
	if !stdslices.Contains(fakesmi.ToolsFor(n.opts.Profile.Vendor), name) {
		return nil, fmt.Errorf("%w: %s", smi.ErrToolNotFound, name)
	}
	var out bytes.Buffer
	err := fakesmi.Run(&out, n.opts, name, args)
	return out.Bytes(), err
}

// startAgent runs a real agent daemon for a simulated node of vendor/model.
func startAgent(t *testing.T, s *testServer, admin, vendor, model string) {
	t.Helper()
	dir := agenttest.DataDir(t) // tasks run as an unprivileged account under a root agent
	_, tok := s.bootstrapToken(admin)
	n := &simNode{opts: fakesmi.Options{StatePath: filepath.Join(dir, "fake-state.json"),
		Profile: &fakesmi.Profile{Vendor: vendor, Model: model, Count: 2, MemoryMiB: 65536}}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- daemon.Run(ctx, daemon.Config{Server: s.base, Token: tok, DataDir: filepath.Join(dir, "agent"),
			Heartbeat: 300 * time.Millisecond, PollWait: time.Second, Grace: time.Second,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), SMI: n.Run, CLI: n})
	}()
	t.Cleanup(func() { cancel(); <-done })
}

func waitUntil(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// e2eWorkflow: preprocess on CPU, training fanned out over an NVIDIA and an
// Ascend slice (each reads preprocess's output and writes its own),
// evaluation only if every training succeeded, notification always.
const e2eWorkflow = `
name: train-eval-e2e
params:
  fail_on: none
  targets:
    - {vendor: nvidia}
    - {vendor: ascend}
failure_policy: continue
steps:
  - name: preprocess
    task:
      command: [sh, -c, 'echo rows=1200 >> "$HETEROFLOW_OUTPUTS"; echo "devices=[$CUDA_VISIBLE_DEVICES$ASCEND_RT_VISIBLE_DEVICES]"']
      cpu_milli: 500
  - name: train
    depends: [preprocess]
    for_each: "{{params.targets}}"
    task:
      command: [sh, -c, 'test "{{steps.preprocess.outputs.rows}}" = 1200 && test "{{item.vendor}}" != "{{params.fail_on}}" && echo "loss=0.{{index}}" >> "$HETEROFLOW_OUTPUTS"']
      vendor: "{{item.vendor}}"
      device_count: 1
      memory_mib: 4096
      compute_percent: 50
  - name: evaluate
    depends: [train]
    task:
      command: [sh, -c, 'echo "losses={{steps.train.outputs.loss}}" >> "$HETEROFLOW_OUTPUTS"']
  - name: notify
    depends: [{step: evaluate, on: always}]
    task:
      command: [sh, -c, 'echo "evaluate exit [{{steps.evaluate.exit_code}}]"']
`

// TestWorkflowEndToEnd runs workflows through the assembled control plane
// (API, scheduler, workflow engine) on two simulated heterogeneous nodes
// with real agents, under a quota of one device for the tenant: the
// training steps run one after the other, each on its vendor's node.
func TestWorkflowEndToEnd(t *testing.T) {
	s := startServer(t, t.TempDir())
	admin := s.adminToken()
	startAgent(t, s, admin, "nvidia", "NVIDIA H100 80GB HBM3")
	startAgent(t, s, admin, "ascend", "910B3")
	var nodes struct {
		Items []struct {
			ID      string   `json:"id"`
			State   string   `json:"state"`
			Vendors []string `json:"vendors"`
		} `json:"items"`
	}
	nodeOf := map[string]string{}
	waitUntil(t, "both nodes online", 30*time.Second, func() bool {
		s.ok(http.StatusOK, http.MethodGet, "/api/v1/nodes", admin, nil, &nodes)
		online := 0
		for _, n := range nodes.Items {
			if n.State == "online" && len(n.Vendors) == 1 {
				nodeOf[n.ID] = n.Vendors[0]
				online++
			}
		}
		return online == 2
	})
	var u struct {
		ID int64 `json:"id"`
	}
	s.ok(http.StatusCreated, http.MethodPost, "/api/v1/users", admin,
		map[string]string{"username": "ml", "password": testPassword, "role": "user", "tenant": "lab"}, &u)
	user, _ := s.login("ml", testPassword)
	s.ok(http.StatusCreated, http.MethodPost, "/api/v1/quotas", admin,
		map[string]any{"tenant": "lab", "devices": 1, "policy": "queue"}, nil)

	run := func(params map[string]string) httpapi.WorkflowDetailJSON {
		var w httpapi.WorkflowDetailJSON
		s.ok(http.StatusCreated, http.MethodPost, "/api/v1/workflows", user,
			map[string]any{"document": e2eWorkflow, "params": params}, &w)
		waitUntil(t, "workflow ended", 90*time.Second, func() bool {
			s.ok(http.StatusOK, http.MethodGet, fmt.Sprintf("/api/v1/workflows/%d", w.ID), user, nil, &w)
			return w.State.Terminal()
		})
		return w
	}
	task := func(id int64) httpapi.TaskJSON {
		var tk httpapi.TaskJSON
		s.ok(http.StatusOK, http.MethodGet, fmt.Sprintf("/api/v1/tasks/%d", id), user, nil, &tk)
		return tk
	}

	w := run(nil)
	require.Equal(t, controlplane.WorkflowSucceeded, w.State, w.Reason)
	st := map[string]httpapi.WorkflowStepJSON{}
	for _, x := range w.Steps {
		st[x.Name] = x
		require.Equal(t, controlplane.StepSucceeded, x.State, "%s: %s", x.Name, x.Reason)
		require.Equal(t, 0, *x.ExitCode)
	}
	require.Equal(t, map[string]string{"rows": "1200"}, st["preprocess"].Outputs)
	require.Equal(t, map[string]string{"losses": "0.0,0.1"}, st["evaluate"].Outputs, "outputs passed downstream")
	pre := task(st["preprocess"].TaskID)
	require.Zero(t, pre.DeviceCount, "preprocess runs on CPU")
	require.Equal(t, "lab", pre.Tenant, "steps inherit the tenant")
	var trains []httpapi.TaskJSON
	for i, vendor := range []string{"nvidia", "ascend"} {
		tk := task(st[fmt.Sprintf("train[%d]", i)].TaskID)
		require.Equal(t, vendor, tk.Vendor)
		require.Equal(t, vendor, nodeOf[tk.NodeID], "train[%d] ran on the %s node", i, vendor)
		require.Equal(t, 50, tk.ComputePercent, "a slice, not a whole card")
		trains = append(trains, tk)
	}
	// Quota of one device for the tenant: the two training steps never ran at once.
	a, b := trains[0], trains[1]
	require.True(t, !a.StartedAt.Before(*b.FinishedAt) || !b.StartedAt.Before(*a.FinishedAt),
		"training steps overlapped under a one-device quota: %v–%v and %v–%v", a.StartedAt, a.FinishedAt, b.StartedAt, b.FinishedAt)
	// The notification ran after evaluation and saw its exit code.
	waitUntil(t, "notify log shipped", 20*time.Second, func() bool {
		r := s.do(http.MethodGet, fmt.Sprintf("/api/v1/tasks/%d/logs", st["notify"].TaskID), user, nil)
		return r.Status == http.StatusOK && bytes.Contains(r.Body, []byte("evaluate exit [0]"))
	})

	// One training fails: evaluation is skipped, the notification still runs.
	w = run(map[string]string{"fail_on": "ascend"})
	require.Equal(t, controlplane.WorkflowFailed, w.State)
	require.Contains(t, w.Reason, "train[1]")
	st = map[string]httpapi.WorkflowStepJSON{}
	for _, x := range w.Steps {
		st[x.Name] = x
	}
	require.Equal(t, controlplane.StepSucceeded, st["train[0]"].State)
	require.Equal(t, controlplane.StepFailed, st["train[1]"].State)
	require.NotZero(t, *st["train[1]"].ExitCode)
	require.Equal(t, controlplane.StepSkipped, st["evaluate"].State)
	require.Zero(t, st["evaluate"].TaskID, "evaluation never ran")
	require.Equal(t, controlplane.StepSucceeded, st["notify"].State)
}

// TestWorkflowSurvivesRestart stops the server mid-workflow and starts it
// again on the same data dir: the workflow, its released step and that
// step's one task are all there, nothing is released twice, and the engine
// of the new server carries on (a cancel stops the step's task).
func TestWorkflowSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	admin := s.adminToken()
	var w httpapi.WorkflowDetailJSON
	s.ok(http.StatusCreated, http.MethodPost, "/api/v1/workflows", admin, map[string]any{"document": `
name: restart
steps:
  - {name: a, task: {command: [sleep, "1"]}}
  - {name: b, depends: [a], task: {command: ["true"]}}
`}, &w)
	waitUntil(t, "step a released", 20*time.Second, func() bool {
		s.ok(http.StatusOK, http.MethodGet, fmt.Sprintf("/api/v1/workflows/%d", w.ID), admin, nil, &w)
		return w.Steps[0].TaskID != 0
	})
	taskA := w.Steps[0].TaskID
	s.stop()

	s = startServer(t, dir)
	admin = s.adminToken()
	time.Sleep(2 * time.Second) // the new engine takes the lease and ticks
	s.ok(http.StatusOK, http.MethodGet, fmt.Sprintf("/api/v1/workflows/%d", w.ID), admin, nil, &w)
	require.Equal(t, controlplane.WorkflowRunning, w.State)
	require.Equal(t, taskA, w.Steps[0].TaskID, "the same task")
	require.Equal(t, controlplane.StepPending, w.Steps[1].State)
	var tasks httpapi.List[httpapi.TaskJSON]
	s.ok(http.StatusOK, http.MethodGet, "/api/v1/tasks?label=heteroflow.workflow="+fmt.Sprint(w.ID), admin, nil, &tasks)
	require.Equal(t, 1, tasks.Total, "nothing released twice")

	s.ok(http.StatusOK, http.MethodPost, fmt.Sprintf("/api/v1/workflows/%d/cancel", w.ID), admin, nil, &w)
	waitUntil(t, "the step's task cancelled by the new engine", 20*time.Second, func() bool {
		s.ok(http.StatusOK, http.MethodGet, fmt.Sprintf("/api/v1/workflows/%d", w.ID), admin, nil, &w)
		return w.Steps[0].State == controlplane.StepCancelled
	})
	require.Equal(t, controlplane.TaskCancelled, w.Steps[0].TaskState)
}
