package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
)

func TestBadInput(t *testing.T) {
	e := newEnv(t)
	tok := e.tokens[controlplane.RoleUser]
	big := `{"name":"` + strings.Repeat("a", 70<<10) + `","command":["x"]}`
	cases := []struct {
		name, method, path, body string
		want                     int
		code, msg                string
	}{
		{"malformed json", "POST", "/api/v1/tasks", `{"name":`, 400, "invalid_argument", "unexpected end of JSON"},
		{"not an object", "POST", "/api/v1/tasks", `[1,2]`, 400, "invalid_argument", "expected object"},
		{"unknown field", "POST", "/api/v1/tasks", `{"name":"a","command":["x"],"gpus":2}`, 400, "invalid_argument", "gpus"},
		{"wrong type", "POST", "/api/v1/tasks", `{"name":"a","command":"x"}`, 400, "invalid_argument", "command"},
		{"oversize body", "POST", "/api/v1/tasks", big, 413, "payload_too_large", "larger than 65536 bytes"},
		{"missing required", "POST", "/api/v1/auth/login", `{"username":"x"}`, 400, "invalid_argument", "password"},
		{"bad limit", "GET", "/api/v1/tasks?limit=5000", "", 400, "invalid_argument", "limit"},
		{"bad state", "GET", "/api/v1/tasks?state=flying", "", 400, "invalid_argument", `unknown state "flying"`},
		{"bad since", "GET", "/api/v1/tasks?since=yesterday", "", 400, "invalid_argument", "RFC 3339"},
		{"bad label", "GET", "/api/v1/tasks?label=novalue", "", 400, "invalid_argument", "key=value"},
		{"bad id", "GET", "/api/v1/tasks/abc", "", 400, "invalid_argument", "id"},
		{"missing task", "GET", "/api/v1/tasks/999999", "", 404, "not_found", "not found"},
		{"no route", "GET", "/api/v1/nope", "", 404, "not_found", "no route"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var body any
			if tc.body != "" {
				body = tc.body
			}
			st, er := e.apiErr(tc.method, tc.path, tok, body)
			require.Equal(t, tc.want, st, er.Message)
			require.Equal(t, tc.code, er.Code)
			require.Contains(t, er.Message, tc.msg)
		})
	}
}

func TestTaskValidationMessages(t *testing.T) {
	e := newEnv(t)
	tok := e.tokens[controlplane.RoleUser]
	cases := []struct {
		spec map[string]any
		msg  string
	}{
		{map[string]any{"command": []string{"x"}}, "validation failed: expected required property name to be present"},
		{map[string]any{"name": "a"}, "command or image is required"},
		{map[string]any{"name": "a", "image": "i", "device_count": 65}, "device_count must be between 0 and 64"},
		{map[string]any{"name": "a", "image": "i", "device_count": 1, "compute_percent": 5}, "compute_percent must be between 10 and 100"},
		{map[string]any{"name": "a", "image": "i", "memory_mib": 10}, "need device_count ≥ 1"},
		{map[string]any{"name": "a", "image": "i", "priority": 1001}, "priority must be between 0 and 1000"},
		{map[string]any{"name": "a", "image": "i", "qos": "platinum"}, `qos must be gold, silver or bronze, not "platinum"`},
		{map[string]any{"name": "a", "image": "i", "max_retries": -1}, "max_retries must be between 0 and 100"},
		{map[string]any{"name": "a", "image": "i", "timeout_seconds": -5}, "timeout_seconds must be between"},
		{map[string]any{"name": "a", "image": "i", "gang": "g"}, "gang_size must be at least 1"},
		{map[string]any{"name": strings.Repeat("n", 254), "image": "i"}, "name"},
	}
	for _, tc := range cases {
		t.Run(tc.msg, func(t *testing.T) {
			st, er := e.apiErr(http.MethodPost, "/api/v1/tasks", tok, tc.spec)
			require.Equal(t, http.StatusBadRequest, st)
			require.Equal(t, "invalid_argument", er.Code)
			require.Contains(t, er.Message, tc.msg)
		})
	}
	var ok TaskJSON
	require.Equal(t, http.StatusCreated, e.call(http.MethodPost, "/api/v1/tasks", tok, map[string]any{
		"name": "train", "image": "pytorch:2", "args": []string{"--epochs", "3"}, "env": map[string]string{"A": "1"},
		"device_count": 2, "memory_mib": 8192, "compute_percent": 50, "vendor": "nvidia", "models": []string{"A100"},
		"qos": "silver", "priority": 10, "timeout_seconds": 3600, "max_retries": 2, "labels": map[string]string{"team": "ml"},
		"project": "p1", "cpu_milli": 2000, "host_memory_mib": 4096, "rdma": true, "gang": "g1", "gang_size": 2,
	}, &ok))
	require.Equal(t, controlplane.TaskSubmitted, ok.State)
	require.Equal(t, "user1", ok.Owner)
	require.Equal(t, []string{"A100"}, ok.Models)
	require.True(t, ok.RDMA)
	require.Equal(t, 2, ok.GangSize)
}

// hostile strings must be stored and returned byte for byte: parameterised
// SQL, and JSON encoding that does not "sanitise" (the console escapes).
var hostile = []string{
	`'; DROP TABLE tasks; --`,
	`" OR 1=1 --`,
	`<img src=x onerror=alert(1)>`,
	`<script>alert("x")</script>`,
	`Robert'); DELETE FROM users WHERE ('1'='1`,
	"名字\u0000with nul? no: \u2028line sep",
}

func TestHostileStringsVerbatim(t *testing.T) {
	e := newEnv(t)
	tok := e.tokens[controlplane.RoleUser]
	for _, s := range hostile {
		s = strings.ReplaceAll(s, "\u0000", "")
		t.Run(s, func(t *testing.T) {
			var created TaskJSON
			require.Equal(t, http.StatusCreated, e.call(http.MethodPost, "/api/v1/tasks", tok, map[string]any{
				"name": s, "command": []string{s}, "labels": map[string]string{"k": s}, "project": s}, &created))
			var got TaskJSON
			require.Equal(t, http.StatusOK, e.call(http.MethodGet, "/api/v1/tasks/"+itoa(created.ID), tok, nil, &got))
			require.Equal(t, s, got.Name)
			require.Equal(t, []string{s}, got.Command)
			require.Equal(t, s, got.Labels["k"])
			require.Equal(t, s, got.Project)

			// The raw body carries the string JSON-escaped, never HTML-mangled.
			res := e.raw(http.MethodGet, "/api/v1/tasks/"+itoa(created.ID), tok, nil)
			var raw map[string]json.RawMessage
			require.NoError(t, json.NewDecoder(res.Body).Decode(&raw))
			res.Body.Close()
			var name string
			require.NoError(t, json.Unmarshal(raw["name"], &name))
			require.Equal(t, s, name)
			require.Equal(t, "application/json", res.Header.Get("Content-Type"))

			var l List[TaskJSON]
			require.Equal(t, http.StatusOK, e.call(http.MethodGet, "/api/v1/tasks?q="+urlQuery(s), tok, nil, &l))
			require.GreaterOrEqual(t, l.Total, 1)
			for _, it := range l.Items {
				require.Contains(t, it.Name, s)
			}
		})
	}
	// Users too: display name with markup round-trips, tables still intact.
	admin := e.tokens[controlplane.RoleAdmin]
	var u UserJSON
	require.Equal(t, http.StatusCreated, e.call(http.MethodPost, "/api/v1/users", admin, map[string]string{
		"username": "mallory", "password": testPassword, "role": "viewer", "display_name": hostile[2], "email": hostile[0]}, &u))
	require.Equal(t, hostile[2], u.DisplayName)
	var l List[UserJSON]
	require.Equal(t, http.StatusOK, e.call(http.MethodGet, "/api/v1/users?q="+urlQuery(hostile[1]), admin, nil, &l))
	require.Equal(t, 0, l.Total, "injection in a filter matches nothing")
	require.Equal(t, http.StatusOK, e.call(http.MethodGet, "/api/v1/users", admin, nil, &l))
	require.Equal(t, 5, l.Total)
}

// TestTaskBounds: the API refuses out-of-range numbers and NUL bytes with
// 400 before the store sees them.
func TestTaskBounds(t *testing.T) {
	e := newEnv(t)
	tok := e.tokens[controlplane.RoleUser]
	for name, body := range map[string]map[string]any{
		"memory_mib 2^63-1": {"name": "m", "command": []string{"true"}, "device_count": 1, "memory_mib": int64(1<<63 - 1)},
		"cpu_milli":         {"name": "m", "command": []string{"true"}, "cpu_milli": 1 << 40},
		"gang_size":         {"name": "m", "command": []string{"true"}, "gang": "g", "gang_size": 1 << 30},
		"NUL in name":       {"name": "a\x00b", "command": []string{"true"}},
		"long project":      {"name": "m", "command": []string{"true"}, "project": strings.Repeat("p", 129)},
	} {
		st, er := e.apiErr(http.MethodPost, "/api/v1/tasks", tok, body)
		require.Equal(t, http.StatusBadRequest, st, name)
		require.Equal(t, "invalid_argument", er.Code, name)
	}
}
