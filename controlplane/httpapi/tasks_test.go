package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
)

func TestTaskVisibilityCancelAndAudit(t *testing.T) {
	e := newEnv(t)
	u1 := e.tokens[controlplane.RoleUser]
	other := e.createUser("user2", controlplane.RoleUser)
	u2 := e.login(other.Username, testPassword)

	var t1 TaskJSON
	require.Equal(t, http.StatusCreated, e.call(http.MethodPost, "/api/v1/tasks", u1,
		map[string]any{"name": "mine", "command": []string{"sleep", "1"}, "labels": map[string]string{"team": "a"}}, &t1))

	// user2 cannot see or cancel user1's task; viewers see but cannot cancel.
	var l List[TaskJSON]
	require.Equal(t, http.StatusOK, e.call(http.MethodGet, "/api/v1/tasks", u2, nil, &l))
	require.Equal(t, 0, l.Total)
	st, _ := e.apiErr(http.MethodGet, "/api/v1/tasks/"+itoa(t1.ID), u2, nil)
	require.Equal(t, http.StatusNotFound, st)
	st, _ = e.apiErr(http.MethodPost, "/api/v1/tasks/"+itoa(t1.ID)+"/cancel", u2, nil)
	require.Equal(t, http.StatusNotFound, st)
	st, _ = e.apiErr(http.MethodPost, "/api/v1/tasks/"+itoa(t1.ID)+"/cancel", e.tokens[controlplane.RoleViewer], nil)
	require.Equal(t, http.StatusForbidden, st)
	// A viewer sees only the tasks of its tenants: none while in none,
	// user1's once user1 submits into a tenant the viewer belongs to.
	require.Equal(t, http.StatusOK, e.call(http.MethodGet, "/api/v1/tasks?owner=user1&label=team=a", e.tokens[controlplane.RoleViewer], nil, &l))
	require.Equal(t, 0, l.Total)
	admin := e.tokens[controlplane.RoleAdmin]
	require.Equal(t, http.StatusCreated, e.call(http.MethodPost, "/api/v1/tenants", admin, map[string]string{"name": "team-a"}, nil))
	require.Equal(t, http.StatusOK, e.call(http.MethodPut, "/api/v1/tenants/team-a/members/"+e.users[controlplane.RoleUser].Username, admin, map[string]string{"role": "member"}, nil))
	require.Equal(t, http.StatusOK, e.call(http.MethodPut, "/api/v1/tenants/team-a/members/"+e.users[controlplane.RoleViewer].Username, admin, map[string]string{"role": "viewer"}, nil))
	var t0 TaskJSON
	require.Equal(t, http.StatusCreated, e.call(http.MethodPost, "/api/v1/tasks", u1,
		map[string]any{"name": "in-tenant", "command": []string{"true"}, "tenant": "team-a", "labels": map[string]string{"team": "a"}}, &t0))
	require.Equal(t, http.StatusOK, e.call(http.MethodGet, "/api/v1/tasks?owner=user1&label=team=a", e.tokens[controlplane.RoleViewer], nil, &l))
	require.Equal(t, 1, l.Total)
	require.Equal(t, t0.ID, l.Items[0].ID)
	require.Equal(t, http.StatusOK, e.call(http.MethodGet, "/api/v1/tasks?owner=ghost", e.tokens[controlplane.RoleOperator], nil, &l))
	require.Equal(t, 0, l.Total)

	var c TaskJSON
	require.Equal(t, http.StatusOK, e.call(http.MethodPost, "/api/v1/tasks/"+itoa(t1.ID)+"/cancel", u1, nil, &c))
	require.Equal(t, controlplane.TaskCancelled, c.State)
	st, er := e.apiErr(http.MethodPost, "/api/v1/tasks/"+itoa(t1.ID)+"/cancel", u1, nil)
	require.Equal(t, http.StatusConflict, st)
	require.Contains(t, er.Message, "cancelled and cannot be cancelled")

	var ev TaskEventsJSON
	require.Equal(t, http.StatusOK, e.call(http.MethodGet, "/api/v1/tasks/"+itoa(t1.ID)+"/events", u1, nil, &ev))
	require.Equal(t, controlplane.TaskCancelled, ev.Items[len(ev.Items)-1].To)
	require.Equal(t, "user1", ev.Items[len(ev.Items)-1].Actor)

	byAction := map[string][]AuditJSON{}
	for _, a := range e.audit("module=api") {
		byAction[a.Action] = append(byAction[a.Action], a)
	}
	require.Len(t, byAction["task.create"], 2) // newest first: the tenant's task, then t1
	cr := byAction["task.create"][1]
	require.Equal(t, "user1", cr.Actor)
	require.Equal(t, "task/"+itoa(t1.ID), cr.Target)
	require.Equal(t, "ok", cr.Result)
	require.Equal(t, "127.0.0.1", cr.SourceIP)
	require.Equal(t, controlplane.LevelInfo, cr.Level)
	results := map[string]bool{}
	for _, a := range byAction["task.cancel"] {
		results[a.Actor+" "+a.Result] = true
	}
	require.True(t, results["user1 ok"])
	require.True(t, results["viewer1 denied: forbidden: role viewer may not cancel tasks"], "%v", results)
	require.True(t, results["user2 failed: not found: task "+itoa(t1.ID)], "%v", results)
}

func TestHeadersCORSAndOpenAPI(t *testing.T) {
	e := newEnv(t)
	res := e.raw(http.MethodGet, "/health", "", nil)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Len(t, res.Header.Get("X-Request-Id"), 24)
	require.Equal(t, "nosniff", res.Header.Get("X-Content-Type-Options"))
	require.Contains(t, res.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'")
	require.Equal(t, "no-referrer", res.Header.Get("Referrer-Policy"))

	res = e.raw(http.MethodGet, "/health", "", nil, "X-Request-Id", "caller-123")
	res.Body.Close()
	require.Equal(t, "caller-123", res.Header.Get("X-Request-Id"))

	res = e.raw(http.MethodOptions, "/api/v1/tasks", "", nil, "Origin", "https://console.example", "Access-Control-Request-Method", "POST")
	res.Body.Close()
	require.Equal(t, http.StatusNoContent, res.StatusCode)
	require.Equal(t, "https://console.example", res.Header.Get("Access-Control-Allow-Origin"))
	require.Contains(t, res.Header.Get("Access-Control-Allow-Headers"), "Authorization")

	res = e.raw(http.MethodOptions, "/api/v1/tasks", "", nil, "Origin", "https://evil.example", "Access-Control-Request-Method", "POST")
	res.Body.Close()
	require.Equal(t, http.StatusForbidden, res.StatusCode)
	require.Empty(t, res.Header.Get("Access-Control-Allow-Origin"))

	res = e.raw(http.MethodGet, "/api/v1/openapi.json", "", nil)
	var doc struct {
		OpenAPI string                     `json:"openapi"`
		Paths   map[string]json.RawMessage `json:"paths"`
	}
	require.NoError(t, json.NewDecoder(res.Body).Decode(&doc))
	res.Body.Close()
	require.Equal(t, "3.1.0", doc.OpenAPI)
	for _, p := range []string{"/api/v1/tasks", "/api/v1/tasks/{id}/cancel", "/api/v1/auth/login", "/api/v1/audit"} {
		require.Contains(t, doc.Paths, p)
	}
}

func TestHealthReportsStoreDown(t *testing.T) {
	e := newEnv(t)
	require.NoError(t, e.store.Close())
	var h HealthJSON
	require.Equal(t, http.StatusServiceUnavailable, e.call(http.MethodGet, "/health", "", nil, &h))
	require.Equal(t, "degraded", h.Status)
	require.Nil(t, h.Checks, "anonymous callers see only the status")
	_ = e.auditor.Flush(context.Background())
}

// TestReservedLabels: below operator a submission may not set the labels
// HeteroFlow sets itself (a task would pass for a workflow's step or a
// forwarded task); operators and admins may, as a hub forwarding does.
func TestReservedLabels(t *testing.T) {
	e := newEnv(t)
	user := e.tokens[controlplane.RoleUser]
	spec := map[string]any{"name": "fake-step", "command": []string{"true"}, "labels": map[string]string{"heteroflow.workflow": "1"}}
	status, er := e.apiErr(http.MethodPost, "/api/v1/tasks", user, spec)
	require.Equal(t, http.StatusBadRequest, status)
	require.Equal(t, "label_reserved", er.Code)
	require.Contains(t, er.Message, `label "heteroflow.workflow"`)
	var l List[TaskJSON]
	require.Equal(t, http.StatusOK, e.call(http.MethodGet, "/api/v1/tasks?q=fake-step", user, nil, &l))
	require.Zero(t, l.Total, "nothing stored")
	spec["labels"] = map[string]string{"team": "ml", "heteroflowish": "ok"}
	require.Equal(t, http.StatusCreated, e.call(http.MethodPost, "/api/v1/tasks", user, spec, nil), "other labels are the user's")
	spec["labels"] = map[string]string{"heteroflow.hub/task": "9"}
	require.Equal(t, http.StatusCreated, e.call(http.MethodPost, "/api/v1/tasks", e.tokens[controlplane.RoleAdmin], spec, nil))
}
