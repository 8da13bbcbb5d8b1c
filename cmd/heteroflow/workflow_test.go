package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWorkflowCLI drives `heteroflow workflow` as a user would, against a
// server with one CPU agent: validation errors name the step and exit
// non-zero, submit --wait follows a run to its end (outputs passed from
// one step to the next), a failed run exits non-zero and is retried,
// cancel, list, get and events.
func TestWorkflowCLI(t *testing.T) {
	s := startApp(t)
	r := cli(t, nil, adminPassword+"\n", "login", "--server", s.base, "--username", "admin", "--password-stdin")
	require.Equal(t, 0, r.code, r.stderr)
	startAgent(t, s.base, "wf-cli-node")
	dir := t.TempDir()
	file := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		return p
	}
	good := file("good.yaml", `name: cli-flow
params: {msg: hello}
steps:
  - name: count
    task: {command: [sh, -c, 'echo rows=3 >> "$HETEROFLOW_OUTPUTS"']}
  - name: report
    depends: [count]
    task: {command: [sh, -c, 'echo "{{params.msg}} {{steps.count.outputs.rows}}"; echo said="{{params.msg}}" >> "$HETEROFLOW_OUTPUTS"']}
`)
	bad := file("bad.yaml", `name: bad
steps:
  - {name: a, task: {command: ["true"]}}
  - {name: b, depends: [a, ghost], task: {command: ["true"]}}
`)
	failing := file("fail.yaml", `name: cli-fail
steps:
  - {name: boom, task: {command: [sh, -c, 'exit 4']}}
  - {name: after, depends: [{step: boom, on: always}], task: {command: ["true"]}}
`)
	long := file("long.yaml", "name: cli-long\nsteps:\n  - {name: nap, task: {command: [sleep, '600']}}\n")

	r = cli(t, nil, "", "workflow", "validate", bad)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "step b")
	require.Contains(t, r.stderr, `"ghost"`)
	r = cli(t, nil, "", "workflow", "submit", filepath.Join(dir, "missing.yaml"))
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "read workflow")
	r = cli(t, nil, "", "workflow", "get", "abc")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "positive number")
	r = cli(t, nil, "", "workflow", "validate", good)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "2 steps, 1 edges")

	r = cli(t, nil, "", "workflow", "submit", good, "--param", "msg=bonjour", "--wait", "90s")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	require.Regexp(t, `workflow \d+ "cli-flow": succeeded`, r.stdout)
	require.Contains(t, r.stdout, "said=bonjour", "the second step saw the parameter")

	r = cli(t, nil, "", "workflow", "submit", failing, "--wait", "90s", "--json")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "failed")
	var w struct {
		ID    int64
		State string
		Steps []struct {
			Name     string
			State    string
			ExitCode *int `json:"exit_code"`
		}
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &w))
	require.Equal(t, "failed", w.State)
	require.Equal(t, 4, *w.Steps[0].ExitCode)
	require.Equal(t, "succeeded", w.Steps[1].State, "on: always")
	id := strconvI(w.ID)
	r = cli(t, nil, "", "workflow", "retry", id, "--from", "boom")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "(retries 1 / 重试 1 次)")
	r = cli(t, nil, "", "workflow", "events", id)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "retry 1 from step boom")
	require.Regexp(t, `(?m)^TIME / 时间\s+STEP / 步骤\s`, r.stdout, "column names in both languages")
	rfc3339 := `\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d)`
	require.Regexp(t, `(?m)^`+rfc3339+`\s`, r.stdout, "times are RFC 3339 with their zone, as the README says")

	r = cli(t, nil, "", "workflow", "submit", long, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &w))
	r = cli(t, nil, "", "workflow", "cancel", strconvI(w.ID), "--reason", "not today")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "cancelled")
	require.Contains(t, r.stdout, "not today")
	r = cli(t, nil, "", "workflow", "cancel", strconvI(w.ID))
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "cannot be cancelled")

	r = cli(t, nil, "", "workflow", "list", "--q", "cli-")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "cli-flow")
	require.Contains(t, r.stdout, "cli-long")
	require.Contains(t, r.stdout, "3 of 3")
	require.Regexp(t, `cli-flow\s.*\s`+rfc3339+`\s`, r.stdout, "times are RFC 3339 with their zone")
}
