package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// apiKey creates an operator API key through the API as admin.
func apiKey(t *testing.T, base string) string { return apiKeyWithRole(t, base, "operator") }

// apiKeyWithRole creates an API key of role through the API as admin.
func apiKeyWithRole(t *testing.T, base, role string) string {
	t.Helper()
	post := func(path, tok string, in, out any) {
		b, err := json.Marshal(in)
		require.NoError(t, err)
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, base+path, bytes.NewReader(b))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		require.Less(t, res.StatusCode, 300, path)
		require.NoError(t, json.NewDecoder(res.Body).Decode(out))
	}
	var login struct {
		AccessToken string `json:"access_token"`
	}
	post("/api/v1/auth/login", "", map[string]string{"username": "admin", "password": adminPassword}, &login)
	var key struct {
		Key string `json:"key"`
	}
	post("/api/v1/apikeys", login.AccessToken, map[string]string{"name": "cli-test", "role": role}, &key)
	require.NotEmpty(t, key.Key)
	return key.Key
}

// An API key takes its server from $HETEROFLOW_SERVER, as login and the
// agent do; the API's answers and an unreachable server are reported in
// both languages with a non-zero exit.
func TestAPIKeyServerFromEnvAndBilingualAPIErrors(t *testing.T) {
	s := startApp(t)
	key := apiKey(t, s.base)

	r := cli(t, map[string]string{"HETEROFLOW_SERVER": s.base, "HETEROFLOW_API_KEY": key}, "", "task", "list")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "0 of 0")
	r = cli(t, map[string]string{"HETEROFLOW_API_KEY": key}, "", "task", "list")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "$HETEROFLOW_SERVER")

	env := map[string]string{"HETEROFLOW_SERVER": s.base, "HETEROFLOW_API_KEY": key}
	for _, tc := range []struct {
		args   []string
		en, zh string
	}{
		{[]string{"task", "get", "987654"}, "not found", "未找到"},
		{[]string{"task", "submit", "--name", "x", "--qos", "platinum", "--", "true"}, "qos must be", "输入无效"},
		{[]string{"task", "list", "--state", "bogus"}, `unknown state "bogus"`, "输入无效"},
		{[]string{"alert", "rule-delete", "987654"}, "may not delete alerts", "无权执行此操作"},
		{[]string{"task", "list", "--server", "http://127.0.0.1:1"}, "connection refused", "无法连接服务器"},
	} {
		r = cli(t, env, "", tc.args...)
		require.Equal(t, 1, r.code, "%v: %+v", tc.args, r)
		require.Contains(t, r.stderr, tc.en, "%v", tc.args)
		require.Contains(t, r.stderr, "/ "+tc.zh, "%v", tc.args)
	}
}
