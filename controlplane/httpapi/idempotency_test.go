package httpapi

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/workflow"
)

// submitWithKey posts a task with an Idempotency-Key and decodes the
// answer: the status, the replay header, the task or the error.
func submitWithKey(e *env, token, key string, body any) (int, string, TaskJSON, ErrorInfo) {
	e.t.Helper()
	res := e.raw(http.MethodPost, "/api/v1/tasks", token, body, "Idempotency-Key", key)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(e.t, err)
	var task TaskJSON
	var apiErr struct {
		Error ErrorInfo `json:"error"`
	}
	if res.StatusCode < 300 {
		require.NoError(e.t, json.Unmarshal(b, &task), string(b))
	} else {
		require.NoError(e.t, json.Unmarshal(b, &apiErr), string(b))
	}
	return res.StatusCode, res.Header.Get("Idempotent-Replayed"), task, apiErr.Error
}

func TestSubmitIdempotencyKey(t *testing.T) {
	e := newEnv(t)
	u1 := e.tokens[controlplane.RoleUser]
	other := e.createUser("user2", controlplane.RoleUser)
	u2 := e.login(other.Username, testPassword)
	spec := map[string]any{"name": "retry-me", "command": []string{"sleep", "1"}, "labels": map[string]string{"a": "1"}}
	count := func(token string) int {
		var l List[TaskJSON]
		require.Equal(t, http.StatusOK, e.call(http.MethodGet, "/api/v1/tasks?q=retry-me", token, nil, &l))
		return l.Total
	}

	st, replayed, first, _ := submitWithKey(e, u1, "k-1", spec)
	require.Equal(t, http.StatusCreated, st)
	require.Empty(t, replayed)

	// The retry (same key, same caller, same body, fields in another
	// order) is answered with the same task, and nothing new is stored.
	reordered := `{"labels":{"a":"1"},"command":["sleep","1"],"name":"retry-me"}`
	st, replayed, again, _ := submitWithKey(e, u1, "k-1", reordered)
	require.Equal(t, http.StatusCreated, st)
	require.Equal(t, "true", replayed)
	require.Equal(t, first.ID, again.ID)
	require.Equal(t, 1, count(u1))

	// The same key with another body is refused with a stable code.
	changed := map[string]any{"name": "retry-me", "command": []string{"sleep", "2"}}
	st, _, _, apiErr := submitWithKey(e, u1, "k-1", changed)
	require.Equal(t, http.StatusConflict, st)
	require.Equal(t, "idempotency_key_reused", apiErr.Code)
	require.Equal(t, itoa(first.ID), apiErr.Params["task"])
	require.Equal(t, 1, count(u1))

	// Keys are per caller: another user's identical key creates its own.
	st, replayed, theirs, _ := submitWithKey(e, u2, "k-1", spec)
	require.Equal(t, http.StatusCreated, st)
	require.Empty(t, replayed)
	require.NotEqual(t, first.ID, theirs.ID)

	// Without a key every submission creates a task.
	require.Equal(t, http.StatusCreated, e.call(http.MethodPost, "/api/v1/tasks", u1, spec, nil))
	require.Equal(t, 2, count(u1))

	// A key longer than 255 bytes is bad input.
	long := make([]byte, 256)
	for i := range long {
		long[i] = 'k'
	}
	st, _, _, _ = submitWithKey(e, u1, string(long), spec)
	require.Equal(t, http.StatusBadRequest, st)
	require.Equal(t, 2, count(u1))
}

// TestSubmitWorkflowIdempotencyKey: a workflow submission with an
// Idempotency-Key is answered, when retried, with the workflow the first
// request created (its steps too), and nothing new is stored; the same key
// with another document or other parameters is a coded 409; keys are per
// caller and apart from tasks' keys.
func TestSubmitWorkflowIdempotencyKey(t *testing.T) {
	e := newEnv(t)
	st := e.store.(workflow.Store)
	kicked := 0
	e.api.RegisterWorkflows(st, func() { kicked++ })
	u1 := e.tokens[controlplane.RoleUser]
	other := e.createUser("wf-user2", controlplane.RoleUser)
	u2 := e.login(other.Username, testPassword)
	submit := func(token, key string, body any) (int, string, WorkflowDetailJSON, ErrorInfo) {
		res := e.raw(http.MethodPost, "/api/v1/workflows", token, body, "Idempotency-Key", key)
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		var w WorkflowDetailJSON
		var apiErr struct {
			Error ErrorInfo `json:"error"`
		}
		if res.StatusCode < 300 {
			require.NoError(t, json.Unmarshal(b, &w), string(b))
		} else {
			require.NoError(t, json.Unmarshal(b, &apiErr), string(b))
		}
		return res.StatusCode, res.Header.Get("Idempotent-Replayed"), w, apiErr.Error
	}
	count := func(token string) int {
		var l List[WorkflowJSON]
		require.Equal(t, http.StatusOK, e.call(http.MethodGet, "/api/v1/workflows", token, nil, &l))
		return l.Total
	}
	body := map[string]any{"document": apiWorkflow, "params": map[string]string{"msg": "bonjour"}}

	status, replayed, first, _ := submit(u1, "wf-1", body)
	require.Equal(t, http.StatusCreated, status)
	require.Empty(t, replayed)
	require.Len(t, first.Steps, 4)
	require.Equal(t, 1, kicked)

	status, replayed, again, _ := submit(u1, "wf-1", body)
	require.Equal(t, http.StatusCreated, status)
	require.Equal(t, "true", replayed)
	require.Equal(t, first.ID, again.ID)
	require.Len(t, again.Steps, 4, "the replay answers the whole workflow")
	require.Equal(t, 1, count(u1))
	require.Equal(t, 1, kicked, "a replay starts nothing")

	// Other parameters are another request.
	status, _, _, apiErr := submit(u1, "wf-1", map[string]any{"document": apiWorkflow, "params": map[string]string{"msg": "hola"}})
	require.Equal(t, http.StatusConflict, status)
	require.Equal(t, "idempotency_key_reused", apiErr.Code)
	require.Equal(t, itoa(first.ID), apiErr.Params["workflow"])
	require.Contains(t, apiErr.Message, "workflow "+itoa(first.ID))
	require.Equal(t, 1, count(u1))

	// An invalid document with a fresh key stores nothing and keeps the
	// key free.
	status, _, _, _ = submit(u1, "wf-2", map[string]any{"document": "name: x\nsteps: []\n"})
	require.Equal(t, http.StatusBadRequest, status)
	status, replayed, _, _ = submit(u1, "wf-2", body)
	require.Equal(t, http.StatusCreated, status)
	require.Empty(t, replayed)
	require.Equal(t, 2, count(u1))

	// Keys are per caller, and a task's key does not answer a workflow.
	status, replayed, theirs, _ := submit(u2, "wf-1", body)
	require.Equal(t, http.StatusCreated, status)
	require.Empty(t, replayed)
	require.NotEqual(t, first.ID, theirs.ID)
	st1, _, _, _ := submitWithKey(e, u1, "shared-key", map[string]any{"name": "t", "command": []string{"true"}})
	require.Equal(t, http.StatusCreated, st1)
	status, replayed, _, _ = submit(u1, "shared-key", body)
	require.Equal(t, http.StatusCreated, status)
	require.Empty(t, replayed)
	require.Equal(t, 3, count(u1))
}
