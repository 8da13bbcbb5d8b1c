package httpapi

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/workflow"
)

const apiWorkflow = `
name: api-flow
params: {msg: hello}
steps:
  - name: prep
    task: {command: [echo, "{{params.msg}}"]}
  - name: train
    depends: [prep]
    for_each: [a, b]
    task: {command: [train, "{{item}}"]}
  - name: notify
    depends: [{step: train, on: always}]
    task: {command: [notify]}
`

func TestWorkflowsAPI(t *testing.T) {
	e := newEnv(t)
	st := e.store.(workflow.Store)
	eng, err := workflow.New(workflow.Options{Store: st, Now: e.clock.Now})
	require.NoError(t, err)
	kicked := 0
	e.api.RegisterWorkflows(st, func() { kicked++ })
	u1 := e.tokens[controlplane.RoleUser]
	other := e.createUser("wf-user2", controlplane.RoleUser)
	u2 := e.login(other.Username, testPassword)

	// Validation: a 400 naming the step, nothing stored.
	status, er := e.apiErr(http.MethodPost, "/api/v1/workflows", u1, map[string]any{"document": `
name: bad
steps:
  - {name: a, task: {command: [x]}}
  - {name: b, depends: [a, ghost], task: {command: [x]}}
`})
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, er.Message, "step b")
	require.Contains(t, er.Message, `"ghost"`)
	status, er = e.apiErr(http.MethodPost, "/api/v1/workflows/validate", u1, map[string]any{"document": `
name: cyc
steps:
  - {name: a, depends: [b], task: {command: [x]}}
  - {name: b, depends: [a], task: {command: [x]}}
`})
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, er.Message, "dependency cycle")
	status, er = e.apiErr(http.MethodPost, "/api/v1/workflows", u1, map[string]any{"document": apiWorkflow,
		"params": map[string]string{"nope": "1"}})
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, er.Message, `"nope" is not declared`)
	var plan WorkflowPlanJSON
	require.Equal(t, http.StatusOK, e.call(http.MethodPost, "/api/v1/workflows/validate", u1,
		map[string]any{"document": apiWorkflow}, &plan))
	require.Len(t, plan.Steps, 4)
	require.Len(t, plan.Edges, 4, "prep→train[0..1], train[0..1]→notify")
	var l List[WorkflowJSON]
	require.Equal(t, http.StatusOK, e.call(http.MethodGet, "/api/v1/workflows", u1, nil, &l))
	require.Zero(t, l.Total, "nothing stored by validation or a rejected submit")

	var w WorkflowDetailJSON
	require.Equal(t, http.StatusCreated, e.call(http.MethodPost, "/api/v1/workflows", u1,
		map[string]any{"document": apiWorkflow, "params": map[string]string{"msg": "bonjour"}}, &w))
	require.Equal(t, controlplane.WorkflowPending, w.State)
	require.Equal(t, "user1", w.Owner)
	require.Equal(t, 1, kicked)
	require.Equal(t, "bonjour", w.Spec["params"].(map[string]any)["msg"])

	// Visibility: another user sees nothing; the viewer (in no tenant, so
	// not one of user1's tenant) neither lists nor reads it and cannot act;
	// an operator lists it by state and name.
	status, _ = e.apiErr(http.MethodGet, "/api/v1/workflows/"+itoa(w.ID), u2, nil)
	require.Equal(t, http.StatusNotFound, status)
	status, _ = e.apiErr(http.MethodPost, "/api/v1/workflows/"+itoa(w.ID)+"/cancel", u2, nil)
	require.Equal(t, http.StatusNotFound, status)
	require.Equal(t, http.StatusOK, e.call(http.MethodGet, "/api/v1/workflows", u2, nil, &l))
	require.Zero(t, l.Total)
	status, _ = e.apiErr(http.MethodPost, "/api/v1/workflows/"+itoa(w.ID)+"/cancel", e.tokens[controlplane.RoleViewer], nil)
	require.Equal(t, http.StatusForbidden, status)
	require.Equal(t, http.StatusOK, e.call(http.MethodGet, "/api/v1/workflows?state=pending&q=api", e.tokens[controlplane.RoleViewer], nil, &l))
	require.Zero(t, l.Total, "the list holds what GET /workflows/{id} shows")
	status, _ = e.apiErr(http.MethodGet, "/api/v1/workflows/"+itoa(w.ID), e.tokens[controlplane.RoleViewer], nil)
	require.Equal(t, http.StatusNotFound, status)
	require.Equal(t, http.StatusOK, e.call(http.MethodGet, "/api/v1/workflows?state=pending&q=api", e.tokens[controlplane.RoleOperator], nil, &l))
	require.Equal(t, 1, l.Total)
	status, _ = e.apiErr(http.MethodGet, "/api/v1/workflows?state=bogus", u1, nil)
	require.Equal(t, http.StatusBadRequest, status)

	require.NoError(t, eng.Tick(t.Context()))
	require.Equal(t, http.StatusOK, e.call(http.MethodGet, "/api/v1/workflows/"+itoa(w.ID), u1, nil, &w))
	require.Equal(t, controlplane.WorkflowRunning, w.State)
	require.Equal(t, controlplane.StepRunning, w.Steps[0].State)
	require.NotZero(t, w.Steps[0].TaskID)
	require.Equal(t, controlplane.TaskSubmitted, w.Steps[0].TaskState)
	var task TaskJSON
	require.Equal(t, http.StatusOK, e.call(http.MethodGet, "/api/v1/tasks/"+itoa(w.Steps[0].TaskID), u1, nil, &task))
	require.Equal(t, []string{"echo", "bonjour"}, task.Command, "the step is an ordinary task of its owner")

	// Cancel: pending steps at once, the running step's task by the engine.
	status, _ = e.apiErr(http.MethodPost, "/api/v1/workflows/"+itoa(w.ID)+"/retry", u1, nil)
	require.Equal(t, http.StatusConflict, status, "a running workflow is not retried")
	require.Equal(t, http.StatusOK, e.call(http.MethodPost, "/api/v1/workflows/"+itoa(w.ID)+"/cancel", u1,
		map[string]any{"reason": "wrong data"}, &w))
	require.Equal(t, controlplane.WorkflowCancelled, w.State)
	require.Equal(t, "wrong data", w.Reason)
	require.NoError(t, eng.Tick(t.Context()))
	require.Equal(t, http.StatusOK, e.call(http.MethodGet, "/api/v1/tasks/"+itoa(w.Steps[0].TaskID), u1, nil, &task))
	require.Equal(t, controlplane.TaskCancelled, task.State)
	require.NoError(t, eng.Tick(t.Context()))

	// Retry from the failed/cancelled steps, then resubmit as a new workflow.
	require.Equal(t, http.StatusOK, e.call(http.MethodPost, "/api/v1/workflows/"+itoa(w.ID)+"/retry", u1, map[string]any{}, &w))
	require.Equal(t, controlplane.WorkflowRunning, w.State)
	require.Equal(t, 1, w.Generation)
	status, er = e.apiErr(http.MethodPost, "/api/v1/workflows/"+itoa(w.ID)+"/cancel", u1, nil)
	require.Equal(t, http.StatusOK, status, er.Message)
	var again WorkflowDetailJSON
	require.Equal(t, http.StatusCreated, e.call(http.MethodPost, "/api/v1/workflows/"+itoa(w.ID)+"/resubmit", u1, nil, &again))
	require.NotEqual(t, w.ID, again.ID)
	require.Equal(t, w.ID, again.ResubmittedFrom)

	var evs WorkflowEventsJSON
	require.Equal(t, http.StatusOK, e.call(http.MethodGet, "/api/v1/workflows/"+itoa(w.ID)+"/events", u1, nil, &evs))
	var trail []string
	for _, ev := range evs.Items {
		if ev.Step == "" {
			trail = append(trail, ev.From+">"+ev.To)
		}
	}
	require.Equal(t, []string{">pending", "pending>running", "running>cancelled", "cancelled>running", "running>cancelled"}, trail)

	for _, action := range []string{"workflow.create", "workflow.cancel", "workflow.retry", "workflow.resubmit"} {
		rows := e.audit("q=" + action)
		require.NotEmpty(t, rows, action)
		ok := 0
		for _, r := range rows {
			require.Equal(t, action, r.Action)
			if r.Result == "ok" {
				require.Contains(t, r.Target, "workflow/", action)
				ok++
			}
		}
		require.NotZero(t, ok, action)
	}
	require.NotEmpty(t, e.raw(http.MethodGet, "/api/v1/openapi.json", "", nil).Body)
	var doc map[string]any
	require.Equal(t, http.StatusOK, e.call(http.MethodGet, "/api/v1/openapi.json", "", nil, &doc))
	paths := doc["paths"].(map[string]any)
	for _, p := range []string{"/api/v1/workflows", "/api/v1/workflows/{id}", "/api/v1/workflows/{id}/cancel",
		"/api/v1/workflows/{id}/retry", "/api/v1/workflows/{id}/resubmit", "/api/v1/workflows/{id}/events", "/api/v1/workflows/validate"} {
		require.Contains(t, paths, p)
	}
}
