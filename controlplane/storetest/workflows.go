package storetest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
)

// WorkflowStore is a store with workflow persistence.
type WorkflowStore interface {
	controlplane.Store
	controlplane.WorkflowStore
}

// WorkflowOpener returns a fresh, empty WorkflowStore and registers its
// Close with t.Cleanup.
type WorkflowOpener func(t *testing.T) WorkflowStore

// RunWorkflows runs the conformance suite of controlplane.WorkflowStore.
func RunWorkflows(t *testing.T, open WorkflowOpener) {
	groups := []struct {
		name string
		run  func(t *testing.T, open WorkflowOpener)
	}{
		{"CreateAndGet", testWorkflowCreate},
		{"List", testWorkflowList},
		{"StepLifecycle", testWorkflowSteps},
		{"GuardsAreAtomic", testWorkflowGuards},
		{"ReleaseOnce", testWorkflowReleaseOnce},
		{"Retry", testWorkflowRetry},
		{"TaskOutputs", testTaskOutputs},
		{"SubmitKeys", testWorkflowSubmitKeys},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			g.run(t, open)
		})
	}
}

func mkWorkflow(t *testing.T, s WorkflowStore, ownerID int64, name string, steps ...string) *controlplane.Workflow {
	t.Helper()
	w := &controlplane.Workflow{Name: name, Spec: []byte(`{"name":"` + name + `"}`), OwnerID: ownerID,
		Tenant: "team", Project: "p", Priority: 7, Reason: "submitted"}
	rows := make([]*controlplane.WorkflowStep, len(steps))
	for i, n := range steps {
		rows[i] = &controlplane.WorkflowStep{Name: n, Step: n, Index: -1}
	}
	require.NoError(t, s.CreateWorkflow(ctx(t), w, rows))
	return w
}

func stepByName(t *testing.T, s WorkflowStore, wf int64) map[string]*controlplane.WorkflowStep {
	t.Helper()
	steps, err := s.ListWorkflowSteps(ctx(t), wf)
	require.NoError(t, err)
	out := map[string]*controlplane.WorkflowStep{}
	for _, st := range steps {
		out[st.Name] = st
	}
	return out
}

func testWorkflowCreate(t *testing.T, open WorkflowOpener) {
	s := open(t)
	u := mkUser(t, s, "wf-owner", controlplane.RoleUser)
	require.ErrorIs(t, s.CreateWorkflow(ctx(t), &controlplane.Workflow{Name: "x", Spec: []byte(`{}`)}, nil), controlplane.ErrInvalid)
	require.ErrorIs(t, s.CreateWorkflow(ctx(t), &controlplane.Workflow{Name: "x", Spec: []byte(`{`)},
		[]*controlplane.WorkflowStep{{Name: "a", Step: "a"}}), controlplane.ErrInvalid)
	require.ErrorIs(t, s.CreateWorkflow(ctx(t), &controlplane.Workflow{Name: "x", Spec: []byte(`{}`), OwnerID: 1 << 40},
		[]*controlplane.WorkflowStep{{Name: "a", Step: "a"}}), controlplane.ErrNotFound)

	w := &controlplane.Workflow{Name: Hostile[0], Spec: []byte(`{"steps":[{"name":"中文"}]}`), OwnerID: u.ID,
		Tenant: "team", Project: "p", Priority: 9, ResubmittedFrom: 3}
	steps := []*controlplane.WorkflowStep{
		{Name: "prep", Step: "prep", Index: -1},
		{Name: "train[0]", Step: "train", Index: 0},
		{Name: "train[1]", Step: "train", Index: 1},
		{Name: Hostile[4], Step: Hostile[4], Index: -1},
	}
	require.NoError(t, s.CreateWorkflow(ctx(t), w, steps))
	require.NotZero(t, w.ID)
	require.Equal(t, controlplane.WorkflowPending, w.State)
	require.Equal(t, "wf-owner", w.Owner)

	got, err := s.GetWorkflow(ctx(t), w.ID)
	require.NoError(t, err)
	require.JSONEq(t, string(w.Spec), string(got.Spec))
	got.Spec = w.Spec
	require.Equal(t, *w, *got)
	_, err = s.GetWorkflow(ctx(t), 1<<40)
	require.ErrorIs(t, err, controlplane.ErrNotFound)

	list, err := s.ListWorkflowSteps(ctx(t), w.ID)
	require.NoError(t, err)
	require.Len(t, list, 4)
	for i, st := range list {
		require.Equal(t, *steps[i], *st, "creation order")
	}
	evs, err := s.ListWorkflowEvents(ctx(t), w.ID)
	require.NoError(t, err)
	require.Len(t, evs, 1)
	require.Equal(t, "pending", evs[0].To)
	require.Equal(t, "wf-owner", evs[0].Actor)
}

func testWorkflowList(t *testing.T, open WorkflowOpener) {
	s := open(t)
	a := mkUser(t, s, "wf-a", controlplane.RoleUser)
	b := mkUser(t, s, "wf-b", controlplane.RoleUser)
	w1 := mkWorkflow(t, s, a.ID, "etl nightly", "x")
	w2 := mkWorkflow(t, s, b.ID, "train ResNet", "x", "y")
	w3 := mkWorkflow(t, s, a.ID, "train bert", "x")
	_, err := s.UpdateWorkflow(ctx(t), controlplane.WorkflowUpdate{WorkflowID: w3.ID, From: controlplane.WorkflowPending,
		To: controlplane.WorkflowSucceeded, Actor: "test"})
	require.NoError(t, err)

	ids := func(f controlplane.WorkflowFilter) ([]int64, int) {
		rows, total, err := s.ListWorkflows(ctx(t), f)
		require.NoError(t, err)
		out := []int64{}
		for _, r := range rows {
			out = append(out, r.ID)
		}
		return out, total
	}
	got, total := ids(controlplane.WorkflowFilter{})
	require.Equal(t, []int64{w3.ID, w2.ID, w1.ID}, got, "newest first")
	require.Equal(t, 3, total)
	got, _ = ids(controlplane.WorkflowFilter{OwnerID: a.ID})
	require.Equal(t, []int64{w3.ID, w1.ID}, got)
	got, _ = ids(controlplane.WorkflowFilter{Query: "TRAIN"})
	require.Equal(t, []int64{w3.ID, w2.ID}, got, "case-insensitive name search")
	got, _ = ids(controlplane.WorkflowFilter{States: []controlplane.WorkflowState{controlplane.WorkflowSucceeded}})
	require.Equal(t, []int64{w3.ID}, got)
	got, total = ids(controlplane.WorkflowFilter{Page: controlplane.Page{Limit: 1, Offset: 1}})
	require.Equal(t, []int64{w2.ID}, got)
	require.Equal(t, 3, total)
	got, _ = ids(controlplane.WorkflowFilter{Active: true})
	require.Equal(t, []int64{w2.ID, w1.ID}, got, "pending and running only")

	// An ended workflow with a step still running stays active until the
	// step's task is stopped.
	task := &controlplane.Task{OwnerID: a.ID, Spec: MinimalSpec("wf-step")}
	_, err = s.UpdateWorkflow(ctx(t), controlplane.WorkflowUpdate{WorkflowID: w1.ID, To: controlplane.WorkflowRunning,
		Steps: []controlplane.StepChange{{Name: "x", From: controlplane.StepPending, To: controlplane.StepRunning, Task: task}}})
	require.NoError(t, err)
	_, err = s.UpdateWorkflow(ctx(t), controlplane.WorkflowUpdate{WorkflowID: w1.ID, To: controlplane.WorkflowCancelled})
	require.NoError(t, err)
	got, _ = ids(controlplane.WorkflowFilter{Active: true})
	require.Equal(t, []int64{w2.ID, w1.ID}, got)
	_, err = s.UpdateWorkflow(ctx(t), controlplane.WorkflowUpdate{WorkflowID: w1.ID,
		Steps: []controlplane.StepChange{{Name: "x", From: controlplane.StepRunning, To: controlplane.StepCancelled}}})
	require.NoError(t, err)
	got, _ = ids(controlplane.WorkflowFilter{Active: true})
	require.Equal(t, []int64{w2.ID}, got)
}

func testWorkflowSteps(t *testing.T, open WorkflowOpener) {
	s := open(t)
	u := mkUser(t, s, "wf-steps", controlplane.RoleUser)
	w := mkWorkflow(t, s, u.ID, "steps", "a", "b")
	task := &controlplane.Task{OwnerID: u.ID, Spec: MinimalSpec("wf-a")}
	task.Spec.Labels = map[string]string{"heteroflow.workflow": fmt.Sprint(w.ID)}
	got, err := s.UpdateWorkflow(ctx(t), controlplane.WorkflowUpdate{WorkflowID: w.ID, From: controlplane.WorkflowPending,
		To: controlplane.WorkflowRunning, Reason: "started", Actor: "engine",
		Steps: []controlplane.StepChange{{Name: "a", From: controlplane.StepPending, To: controlplane.StepRunning,
			Reason: "released", Task: task}}})
	require.NoError(t, err)
	require.Equal(t, controlplane.WorkflowRunning, got.State)
	require.NotNil(t, got.StartedAt)
	require.Nil(t, got.FinishedAt)
	require.NotZero(t, task.ID, "the step's task was created")
	require.Equal(t, controlplane.TaskSubmitted, task.State)
	stored, err := s.GetTask(ctx(t), task.ID)
	require.NoError(t, err)
	require.Equal(t, "wf-steps", stored.Owner)
	require.Equal(t, fmt.Sprint(w.ID), stored.Spec.Labels["heteroflow.workflow"])

	steps := stepByName(t, s, w.ID)
	require.Equal(t, controlplane.StepRunning, steps["a"].State)
	require.Equal(t, task.ID, steps["a"].TaskID)
	require.Equal(t, controlplane.TaskSubmitted, steps["a"].TaskState, "joined task state")
	require.NotNil(t, steps["a"].StartedAt)
	require.Equal(t, controlplane.StepPending, steps["b"].State)
	require.Zero(t, steps["b"].TaskID)

	move(t, s, task.ID, controlplane.TaskQueued, controlplane.TaskScheduled, controlplane.TaskRunning)
	_, err = s.UpdateWorkflow(ctx(t), controlplane.WorkflowUpdate{WorkflowID: w.ID, Actor: "engine",
		Steps: []controlplane.StepChange{{Name: "a", From: controlplane.StepRunning, To: controlplane.StepSucceeded,
			ExitCode: ptr(0), Outputs: map[string]string{"accuracy": "0.93", "中文": Hostile[0]}, Reason: "task succeeded"}}})
	require.NoError(t, err)
	steps = stepByName(t, s, w.ID)
	a := steps["a"]
	require.Equal(t, controlplane.StepSucceeded, a.State)
	require.Equal(t, 0, *a.ExitCode)
	require.Equal(t, map[string]string{"accuracy": "0.93", "中文": Hostile[0]}, a.Outputs)
	require.NotNil(t, a.FinishedAt)
	require.Equal(t, controlplane.TaskRunning, a.TaskState)

	got, err = s.UpdateWorkflow(ctx(t), controlplane.WorkflowUpdate{WorkflowID: w.ID, From: controlplane.WorkflowRunning,
		To: controlplane.WorkflowFailed, Reason: "b failed", Actor: "engine",
		Steps: []controlplane.StepChange{{Name: "b", From: controlplane.StepPending, To: controlplane.StepSkipped, Reason: "dependency failed"}}})
	require.NoError(t, err)
	require.Equal(t, controlplane.WorkflowFailed, got.State)
	require.Equal(t, "b failed", got.Reason)
	require.NotNil(t, got.FinishedAt)

	evs, err := s.ListWorkflowEvents(ctx(t), w.ID)
	require.NoError(t, err)
	var trail []string
	for _, e := range evs {
		trail = append(trail, e.Step+":"+e.From+">"+e.To)
	}
	require.Equal(t, []string{":>pending", ":pending>running", "a:pending>running", "a:running>succeeded",
		":running>failed", "b:pending>skipped"}, trail)
	require.Equal(t, "engine", evs[2].Actor)
	require.Equal(t, "released", evs[2].Reason)

	_, err = s.UpdateWorkflow(ctx(t), controlplane.WorkflowUpdate{WorkflowID: 1 << 40, To: controlplane.WorkflowFailed})
	require.ErrorIs(t, err, controlplane.ErrNotFound)
	_, err = s.UpdateWorkflow(ctx(t), controlplane.WorkflowUpdate{WorkflowID: w.ID,
		Steps: []controlplane.StepChange{{Name: "nope", From: controlplane.StepPending, To: controlplane.StepRunning}}})
	require.ErrorIs(t, err, controlplane.ErrNotFound)
	_, err = s.UpdateWorkflow(ctx(t), controlplane.WorkflowUpdate{WorkflowID: w.ID, To: "bogus"})
	require.ErrorIs(t, err, controlplane.ErrInvalid)
	_, err = s.UpdateWorkflow(ctx(t), controlplane.WorkflowUpdate{WorkflowID: w.ID,
		Steps: []controlplane.StepChange{{Name: "b", From: controlplane.StepSkipped, To: controlplane.StepFailed,
			Task: &controlplane.Task{Spec: MinimalSpec("x")}}}})
	require.ErrorIs(t, err, controlplane.ErrInvalid, "a task only with a start")
}

// testWorkflowGuards: a failed guard anywhere writes nothing at all — no
// workflow change, no step change, no task.
func testWorkflowGuards(t *testing.T, open WorkflowOpener) {
	s := open(t)
	u := mkUser(t, s, "wf-guards", controlplane.RoleUser)
	w := mkWorkflow(t, s, u.ID, "guards", "a", "b")
	task := &controlplane.Task{OwnerID: u.ID, Spec: MinimalSpec("wf-guard-a")}
	_, err := s.UpdateWorkflow(ctx(t), controlplane.WorkflowUpdate{WorkflowID: w.ID, From: controlplane.WorkflowPending,
		To: controlplane.WorkflowRunning, Steps: []controlplane.StepChange{
			{Name: "a", From: controlplane.StepPending, To: controlplane.StepRunning, Task: task},
			{Name: "b", From: controlplane.StepRunning, To: controlplane.StepSucceeded}, // b is pending: guard fails
		}})
	require.ErrorIs(t, err, controlplane.ErrConflict)
	require.Zero(t, task.ID)
	got, err := s.GetWorkflow(ctx(t), w.ID)
	require.NoError(t, err)
	require.Equal(t, controlplane.WorkflowPending, got.State)
	steps := stepByName(t, s, w.ID)
	require.Equal(t, controlplane.StepPending, steps["a"].State)
	require.Zero(t, steps["a"].TaskID)
	tasks, total, err := s.ListTasks(ctx(t), controlplane.TaskFilter{OwnerID: u.ID})
	require.NoError(t, err)
	require.Zero(t, total, "no task left behind: %v", tasks)
	evs, err := s.ListWorkflowEvents(ctx(t), w.ID)
	require.NoError(t, err)
	require.Len(t, evs, 1)

	_, err = s.UpdateWorkflow(ctx(t), controlplane.WorkflowUpdate{WorkflowID: w.ID, From: controlplane.WorkflowRunning,
		To: controlplane.WorkflowCancelled})
	require.ErrorIs(t, err, controlplane.ErrConflict, "workflow guard")
}

// testWorkflowReleaseOnce: engines racing to release the same step (a
// restart, a failover) create its task exactly once.
func testWorkflowReleaseOnce(t *testing.T, open WorkflowOpener) {
	s := open(t)
	u := mkUser(t, s, "wf-race", controlplane.RoleUser)
	w := mkWorkflow(t, s, u.ID, "race", "a")
	const racers = 6
	var wg sync.WaitGroup
	errs := make([]error, racers)
	for i := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = s.UpdateWorkflow(ctx(t), controlplane.WorkflowUpdate{WorkflowID: w.ID,
				Steps: []controlplane.StepChange{{Name: "a", From: controlplane.StepPending, To: controlplane.StepRunning,
					Task: &controlplane.Task{OwnerID: u.ID, Spec: MinimalSpec(fmt.Sprintf("racer-%d", i))}}}})
		}()
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		if err == nil {
			won++
			continue
		}
		require.ErrorIs(t, err, controlplane.ErrConflict)
	}
	require.Equal(t, 1, won)
	_, total, err := s.ListTasks(ctx(t), controlplane.TaskFilter{OwnerID: u.ID})
	require.NoError(t, err)
	require.Equal(t, 1, total, "one task for the step")
}

func testWorkflowRetry(t *testing.T, open WorkflowOpener) {
	s := open(t)
	u := mkUser(t, s, "wf-retry", controlplane.RoleUser)
	w := mkWorkflow(t, s, u.ID, "retry", "a")
	task := &controlplane.Task{OwnerID: u.ID, Spec: MinimalSpec("wf-retry-a")}
	_, err := s.UpdateWorkflow(ctx(t), controlplane.WorkflowUpdate{WorkflowID: w.ID, To: controlplane.WorkflowRunning,
		Steps: []controlplane.StepChange{{Name: "a", From: controlplane.StepPending, To: controlplane.StepRunning, Task: task}}})
	require.NoError(t, err)
	first, err := s.UpdateWorkflow(ctx(t), controlplane.WorkflowUpdate{WorkflowID: w.ID, To: controlplane.WorkflowFailed,
		Steps: []controlplane.StepChange{{Name: "a", From: controlplane.StepRunning, To: controlplane.StepFailed, ExitCode: ptr(3)}}})
	require.NoError(t, err)
	got, err := s.UpdateWorkflow(ctx(t), controlplane.WorkflowUpdate{WorkflowID: w.ID, From: controlplane.WorkflowFailed,
		To: controlplane.WorkflowRunning, Retry: true, Reason: "retry", Actor: "wf-retry",
		Steps: []controlplane.StepChange{{Name: "a", From: controlplane.StepFailed, To: controlplane.StepPending, Reset: true}}})
	require.NoError(t, err)
	require.Equal(t, 1, got.Generation)
	require.Nil(t, got.FinishedAt)
	require.False(t, got.StartedAt.Before(*first.StartedAt), "the clock restarts")
	a := stepByName(t, s, w.ID)["a"]
	require.Equal(t, controlplane.StepPending, a.State)
	require.Zero(t, a.TaskID)
	require.Nil(t, a.ExitCode)
	require.Nil(t, a.StartedAt)
	require.Equal(t, 1, a.Generation)
	// The old task stays in history, unlinked.
	_, err = s.GetTask(ctx(t), task.ID)
	require.NoError(t, err)
}

func testTaskOutputs(t *testing.T, open WorkflowOpener) {
	s := open(t)
	task := mkTask(t, s, 0, nil)
	_, err := s.GetTaskOutputs(ctx(t), task.ID, 0)
	require.ErrorIs(t, err, controlplane.ErrNotFound)
	require.NoError(t, s.PutTaskOutputs(ctx(t), task.ID, 0, map[string]string{"k": "v1"}))
	require.NoError(t, s.PutTaskOutputs(ctx(t), task.ID, 0, map[string]string{"k": "v2", "path": Hostile[6]}))
	require.NoError(t, s.PutTaskOutputs(ctx(t), task.ID, 1, nil))
	got, err := s.GetTaskOutputs(ctx(t), task.ID, 0)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"k": "v2", "path": Hostile[6]}, got)
	got, err = s.GetTaskOutputs(ctx(t), task.ID, 1)
	require.NoError(t, err)
	require.Empty(t, got)
	require.ErrorIs(t, s.PutTaskOutputs(ctx(t), 1<<40, 0, nil), controlplane.ErrNotFound)
}
