package workflow_test

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/sqlite"
	"github.com/heteroflow/heteroflow/controlplane/workflow"
)

// harness is a store, a user, an engine and a clock; tasks are moved by
// hand, standing in for the scheduler and the agents.
type harness struct {
	t     *testing.T
	db    *sqlite.DB
	user  *controlplane.User
	eng   *workflow.Engine
	clock time.Time
	mu    sync.Mutex
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{t: t, clock: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "wf.db"), sqlite.Options{Now: h.now})
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	h.db = db
	h.user = &controlplane.User{Username: "alice", Role: controlplane.RoleUser, PasswordHash: "x", Tenant: "lab"}
	require.NoError(t, db.CreateUser(t.Context(), h.user))
	h.eng = h.engine()
	return h
}

func (h *harness) now() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.clock
}

func (h *harness) advance(d time.Duration) {
	h.mu.Lock()
	h.clock = h.clock.Add(d)
	h.mu.Unlock()
}

func (h *harness) engine() *workflow.Engine {
	e, err := workflow.New(workflow.Options{Store: h.db, Now: h.now})
	require.NoError(h.t, err)
	return e
}

func (h *harness) submit(doc string) *controlplane.Workflow {
	h.t.Helper()
	w, _, err := workflow.Submit(h.t.Context(), h.db, workflow.Submission{Document: []byte(doc), OwnerID: h.user.ID,
		Tenant: h.user.Tenant})
	require.NoError(h.t, err)
	return w
}

func (h *harness) tick() {
	h.t.Helper()
	require.NoError(h.t, h.eng.Tick(h.t.Context()))
}

func (h *harness) steps(id int64) map[string]*controlplane.WorkflowStep {
	h.t.Helper()
	rows, err := h.db.ListWorkflowSteps(h.t.Context(), id)
	require.NoError(h.t, err)
	out := map[string]*controlplane.WorkflowStep{}
	for _, r := range rows {
		out[r.Name] = r
	}
	return out
}

func (h *harness) states(id int64) map[string]controlplane.StepState {
	out := map[string]controlplane.StepState{}
	for n, r := range h.steps(id) {
		out[n] = r.State
	}
	return out
}

func (h *harness) wf(id int64) *controlplane.Workflow {
	w, err := h.db.GetWorkflow(h.t.Context(), id)
	require.NoError(h.t, err)
	return w
}

// finish runs a step's task to its end like the scheduler and an agent.
func (h *harness) finish(id int64, step string, to controlplane.TaskState, exit int) *controlplane.Task {
	h.t.Helper()
	r := h.steps(id)[step]
	require.NotZero(h.t, r.TaskID, "step %s has a task", step)
	t, err := h.db.GetTask(h.t.Context(), r.TaskID)
	require.NoError(h.t, err)
	path := map[controlplane.TaskState][]controlplane.TaskState{
		controlplane.TaskSubmitted: {controlplane.TaskQueued, controlplane.TaskScheduled, controlplane.TaskRunning},
		controlplane.TaskQueued:    {controlplane.TaskScheduled, controlplane.TaskRunning},
		controlplane.TaskScheduled: {controlplane.TaskRunning},
	}[t.State]
	node := "n1"
	for _, s := range path {
		tr := controlplane.Transition{TaskID: t.ID, From: t.State, To: s, Actor: "test"}
		if s == controlplane.TaskScheduled {
			tr.NodeID = &node
		}
		t, err = h.db.TransitionTask(h.t.Context(), tr)
		require.NoError(h.t, err)
	}
	if to != controlplane.TaskRunning {
		t, err = h.db.TransitionTask(h.t.Context(), controlplane.Transition{TaskID: t.ID, From: t.State, To: to,
			ExitCode: &exit, Reason: fmt.Sprintf("exit %d", exit), Actor: "test"})
		require.NoError(h.t, err)
	}
	return t
}

func (h *harness) taskCount() int {
	_, total, err := h.db.ListTasks(h.t.Context(), controlplane.TaskFilter{})
	require.NoError(h.t, err)
	return total
}

const diamond = `
name: diamond
params:
  targets: [nvidia, ascend]
failure_policy: continue
steps:
  - name: preprocess
    task: {command: [prep], cpu_milli: 1000}
    artifacts: {shards: "/shared/{{workflow.id}}/shards"}
  - name: train
    depends: [preprocess]
    for_each: "{{params.targets}}"
    task:
      command: [train, "{{steps.preprocess.artifacts.shards}}", "{{steps.preprocess.outputs.rows}}"]
      vendor: "{{item}}"
      device_count: 1
  - name: evaluate
    depends: [train]
    task: {command: [eval, "{{steps.train.outputs.loss}}", "{{steps.train.exit_code}}"]}
  - name: notify
    depends: [{step: evaluate, on: always}]
    task: {command: [notify]}
`

func TestDiamondSucceeds(t *testing.T) {
	h := newHarness(t)
	w := h.submit(diamond)
	h.tick()
	require.Equal(t, controlplane.WorkflowRunning, h.wf(w.ID).State)
	require.Equal(t, map[string]controlplane.StepState{"preprocess": "running", "train[0]": "pending", "train[1]": "pending",
		"evaluate": "pending", "notify": "pending"}, h.states(w.ID))
	require.Equal(t, 1, h.taskCount(), "only the ready step has a task")
	pre := h.steps(w.ID)["preprocess"]
	task, err := h.db.GetTask(t.Context(), pre.TaskID)
	require.NoError(t, err)
	require.Equal(t, "lab", task.Spec.Tenant, "tenant inherited")
	require.Equal(t, "preprocess", task.Spec.Labels[workflow.LabelStep])

	h.tick()
	require.Equal(t, 1, h.taskCount(), "nothing new while it runs")
	tk := h.finish(w.ID, "preprocess", controlplane.TaskSucceeded, 0)
	require.NoError(t, h.db.PutTaskOutputs(t.Context(), tk.ID, tk.Attempt, map[string]string{"rows": "1200"}))
	h.tick()
	st := h.steps(w.ID)
	require.Equal(t, controlplane.StepSucceeded, st["preprocess"].State)
	require.Equal(t, map[string]string{"rows": "1200"}, st["preprocess"].Outputs)
	require.Equal(t, controlplane.StepRunning, st["train[0]"].State)
	require.Equal(t, controlplane.StepRunning, st["train[1]"].State)
	t1, err := h.db.GetTask(t.Context(), st["train[1]"].TaskID)
	require.NoError(t, err)
	require.Equal(t, "ascend", t1.Spec.Vendor)
	require.Equal(t, []string{"train", fmt.Sprintf("/shared/%d/shards", w.ID), "1200"}, t1.Spec.Command)

	for i, loss := range []string{"0.3", "0.2"} {
		tk := h.finish(w.ID, fmt.Sprintf("train[%d]", i), controlplane.TaskSucceeded, 0)
		require.NoError(t, h.db.PutTaskOutputs(t.Context(), tk.ID, tk.Attempt, map[string]string{"loss": loss}))
		h.tick()
	}
	ev, err := h.db.GetTask(t.Context(), h.steps(w.ID)["evaluate"].TaskID)
	require.NoError(t, err)
	require.Equal(t, []string{"eval", "0.3,0.2", "0,0"}, ev.Spec.Command)
	h.finish(w.ID, "evaluate", controlplane.TaskSucceeded, 0)
	h.tick()
	h.finish(w.ID, "notify", controlplane.TaskSucceeded, 0)
	h.tick()
	got := h.wf(w.ID)
	require.Equal(t, controlplane.WorkflowSucceeded, got.State, got.Reason)
	require.NotNil(t, got.FinishedAt)
	require.Equal(t, 5, h.taskCount())
	evs, err := h.db.ListWorkflowEvents(t.Context(), w.ID)
	require.NoError(t, err)
	require.Equal(t, "succeeded", evs[len(evs)-1].To)
}

func TestFailureSkipsDownstreamAndNotifyAlwaysRuns(t *testing.T) {
	h := newHarness(t)
	w := h.submit(diamond)
	h.tick()
	h.finish(w.ID, "preprocess", controlplane.TaskSucceeded, 0)
	h.tick()
	h.finish(w.ID, "train[0]", controlplane.TaskSucceeded, 0)
	h.finish(w.ID, "train[1]", controlplane.TaskFailed, 3)
	h.tick()
	st := h.steps(w.ID)
	require.Equal(t, controlplane.StepFailed, st["train[1]"].State)
	require.Equal(t, 3, *st["train[1]"].ExitCode)
	require.Equal(t, controlplane.StepSkipped, st["evaluate"].State)
	require.Contains(t, st["evaluate"].Reason, "train did not end in success")
	require.Equal(t, controlplane.StepRunning, st["notify"].State, "always runs")
	h.finish(w.ID, "notify", controlplane.TaskSucceeded, 0)
	h.tick()
	got := h.wf(w.ID)
	require.Equal(t, controlplane.WorkflowFailed, got.State)
	require.Contains(t, got.Reason, "train[1]")
}

func TestStopPolicyCancelsRunningAndStartsOnlyHandlers(t *testing.T) {
	h := newHarness(t)
	w := h.submit(`
name: stop
steps:
  - {name: a, task: {command: [a]}}
  - {name: b, task: {command: [b]}}
  - {name: after-b, depends: [b], task: {command: [x]}}
  - {name: cleanup, depends: [{step: a, on: failure}], task: {command: [c]}}
  - {name: report, depends: [{step: b, on: always}, {step: a, on: always}], task: {command: [r]}}
`)
	h.tick()
	h.finish(w.ID, "b", controlplane.TaskRunning, 0)
	h.finish(w.ID, "a", controlplane.TaskFailed, 1)
	h.tick()
	st := h.steps(w.ID)
	require.Equal(t, controlplane.StepFailed, st["a"].State)
	bt, err := h.db.GetTask(t.Context(), st["b"].TaskID)
	require.NoError(t, err)
	require.Equal(t, controlplane.TaskCancelled, bt.State, "the running branch is stopped")
	require.Equal(t, controlplane.StepRunning, st["cleanup"].State, "a failure handler still runs")
	h.tick()
	st = h.steps(w.ID)
	require.Equal(t, controlplane.StepCancelled, st["b"].State)
	require.Equal(t, controlplane.StepSkipped, st["after-b"].State)
	require.Equal(t, controlplane.StepRunning, st["report"].State)
	h.finish(w.ID, "cleanup", controlplane.TaskSucceeded, 0)
	h.finish(w.ID, "report", controlplane.TaskSucceeded, 0)
	h.tick()
	require.Equal(t, controlplane.WorkflowFailed, h.wf(w.ID).State)
}

func TestStepRetriesAreTheSchedulers(t *testing.T) {
	h := newHarness(t)
	w := h.submit(`{name: r, steps: [{name: a, retries: 1, task: {command: [a]}}]}`)
	h.tick()
	tk := h.finish(w.ID, "a", controlplane.TaskFailed, 1)
	h.tick()
	require.Equal(t, controlplane.StepRunning, h.steps(w.ID)["a"].State, "a retry is left")
	_, err := h.db.TransitionTask(t.Context(), controlplane.Transition{TaskID: tk.ID, From: controlplane.TaskFailed,
		To: controlplane.TaskQueued, Retry: true, Actor: "scheduler"})
	require.NoError(t, err)
	h.finish(w.ID, "a", controlplane.TaskSucceeded, 0)
	h.tick()
	require.Equal(t, controlplane.WorkflowSucceeded, h.wf(w.ID).State)
	require.Equal(t, 1, h.taskCount(), "the same task, retried")
}

func TestCancelStopsRunningSteps(t *testing.T) {
	h := newHarness(t)
	w := h.submit(diamond)
	h.tick()
	h.finish(w.ID, "preprocess", controlplane.TaskRunning, 0)
	got, err := workflow.Cancel(t.Context(), h.db, w.ID, "alice", "not needed")
	require.NoError(t, err)
	require.Equal(t, controlplane.WorkflowCancelled, got.State)
	_, err = workflow.Cancel(t.Context(), h.db, w.ID, "alice", "again")
	require.ErrorIs(t, err, controlplane.ErrConflict)
	h.tick()
	st := h.steps(w.ID)
	task, err := h.db.GetTask(t.Context(), st["preprocess"].TaskID)
	require.NoError(t, err)
	require.Equal(t, controlplane.TaskCancelled, task.State)
	require.Equal(t, controlplane.StepCancelled, st["notify"].State)
	h.tick()
	require.Equal(t, controlplane.StepCancelled, h.steps(w.ID)["preprocess"].State)
	active, _, err := h.db.ListWorkflows(t.Context(), controlplane.WorkflowFilter{Active: true})
	require.NoError(t, err)
	require.Empty(t, active)
	require.Equal(t, 1, h.taskCount())
}

// TestRestartRunsNothingTwice: engines come and go (restarts, failover)
// mid-workflow, and two even tick at once: every step has one task.
func TestRestartRunsNothingTwice(t *testing.T) {
	h := newHarness(t)
	w := h.submit(diamond)
	h.tick()
	h.finish(w.ID, "preprocess", controlplane.TaskSucceeded, 0)
	a, b := h.engine(), h.engine()
	var wg sync.WaitGroup
	for _, e := range []*workflow.Engine{a, b, a, b} {
		wg.Add(1)
		go func() { defer wg.Done(); require.NoError(t, e.Tick(t.Context())) }()
	}
	wg.Wait()
	require.Equal(t, 3, h.taskCount(), "preprocess and the two train instances, once each")
	h.eng = h.engine() // a restarted server
	h.finish(w.ID, "train[0]", controlplane.TaskSucceeded, 0)
	h.finish(w.ID, "train[1]", controlplane.TaskSucceeded, 0)
	h.tick()
	h.tick()
	h.finish(w.ID, "evaluate", controlplane.TaskSucceeded, 0)
	h.eng = h.engine()
	h.tick()
	h.finish(w.ID, "notify", controlplane.TaskSucceeded, 0)
	h.tick()
	require.Equal(t, controlplane.WorkflowSucceeded, h.wf(w.ID).State)
	require.Equal(t, 5, h.taskCount())
}

func TestRetryFromFailedStep(t *testing.T) {
	h := newHarness(t)
	w := h.submit(diamond)
	h.tick()
	h.finish(w.ID, "preprocess", controlplane.TaskSucceeded, 0)
	h.tick()
	h.finish(w.ID, "train[0]", controlplane.TaskSucceeded, 0)
	h.finish(w.ID, "train[1]", controlplane.TaskFailed, 1)
	h.tick()
	_, err := workflow.Retry(t.Context(), h.db, w.ID, "", "alice")
	require.ErrorIs(t, err, controlplane.ErrConflict, "notify still runs")
	h.finish(w.ID, "notify", controlplane.TaskSucceeded, 0)
	h.tick()
	require.Equal(t, controlplane.WorkflowFailed, h.wf(w.ID).State)
	old := h.steps(w.ID)

	got, err := workflow.Retry(t.Context(), h.db, w.ID, "", "alice")
	require.NoError(t, err)
	require.Equal(t, controlplane.WorkflowRunning, got.State)
	require.Equal(t, 1, got.Generation)
	st := h.states(w.ID)
	require.Equal(t, map[string]controlplane.StepState{"preprocess": "succeeded", "train[0]": "succeeded",
		"train[1]": "pending", "evaluate": "pending", "notify": "pending"}, st,
		"what did not succeed, and what follows a step that runs again")
	h.tick()
	nw := h.steps(w.ID)
	require.Equal(t, controlplane.StepRunning, nw["train[1]"].State)
	require.NotEqual(t, old["train[1]"].TaskID, nw["train[1]"].TaskID, "a new task")
	require.Equal(t, old["train[0]"].TaskID, nw["train[0]"].TaskID)

	_, err = workflow.Retry(t.Context(), h.db, w.ID, "", "alice")
	require.ErrorIs(t, err, controlplane.ErrConflict, "running")
	h.finish(w.ID, "train[1]", controlplane.TaskSucceeded, 0)
	h.tick()
	h.finish(w.ID, "evaluate", controlplane.TaskSucceeded, 0)
	h.tick()
	h.finish(w.ID, "notify", controlplane.TaskSucceeded, 0)
	h.tick()
	require.Equal(t, controlplane.WorkflowSucceeded, h.wf(w.ID).State)
	require.Equal(t, 7, h.taskCount(), "train[1], evaluate and notify ran again; the rest once")

	// from: that step and everything after it run again.
	_, err = workflow.Retry(t.Context(), h.db, w.ID, "train", "alice")
	require.ErrorIs(t, err, controlplane.ErrConflict, "a succeeded workflow is resubmitted, not retried")
	_, err = workflow.Retry(t.Context(), h.db, w.ID, "ghost", "alice")
	require.Error(t, err)
}

func TestRetryFromStepResetsDescendants(t *testing.T) {
	h := newHarness(t)
	w := h.submit(diamond)
	h.tick()
	h.finish(w.ID, "preprocess", controlplane.TaskSucceeded, 0)
	h.tick()
	_, err := workflow.Cancel(t.Context(), h.db, w.ID, "alice", "stop")
	require.NoError(t, err)
	h.tick()
	h.tick()
	_, err = workflow.Retry(t.Context(), h.db, w.ID, "ghost", "alice")
	require.ErrorIs(t, err, controlplane.ErrInvalid)
	_, err = workflow.Retry(t.Context(), h.db, w.ID, "preprocess", "alice")
	require.NoError(t, err)
	require.Equal(t, map[string]controlplane.StepState{"preprocess": "pending", "train[0]": "pending",
		"train[1]": "pending", "evaluate": "pending", "notify": "pending"}, h.states(w.ID))
}

func TestWorkflowTimeout(t *testing.T) {
	h := newHarness(t)
	w := h.submit(`{name: t, timeout_seconds: 60, steps: [{name: a, task: {command: [a]}}, {name: b, depends: [a], task: {command: [b]}}]}`)
	h.tick()
	h.finish(w.ID, "a", controlplane.TaskRunning, 0)
	h.advance(61 * time.Second)
	h.tick()
	got := h.wf(w.ID)
	require.Equal(t, controlplane.WorkflowFailed, got.State)
	require.Contains(t, got.Reason, "timed out")
	require.Equal(t, controlplane.StepCancelled, h.steps(w.ID)["b"].State)
	h.tick()
	st := h.steps(w.ID)
	require.Equal(t, controlplane.StepCancelled, st["a"].State, "its task was stopped")
}

func TestGangFanOut(t *testing.T) {
	h := newHarness(t)
	w := h.submit(`{name: g, steps: [{name: ddp, gang: true, for_each: [0, 1, 2], task: {command: [t], vendor: nvidia, device_count: 1}}]}`)
	h.tick()
	for i := range 3 {
		task, err := h.db.GetTask(t.Context(), h.steps(w.ID)[fmt.Sprintf("ddp[%d]", i)].TaskID)
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf("wf%d-ddp-g0", w.ID), task.Spec.Gang)
		require.Equal(t, 3, task.Spec.GangSize)
	}
}
