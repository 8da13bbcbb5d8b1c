package main

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTaskSubmitIdempotencyKeyAndServerList: `task submit` with a server
// list skips a server that refuses connections, and running it again with
// the same --idempotency-key answers the task already created; the same
// key with another spec is refused with the server's code.
func TestTaskSubmitIdempotencyKeyAndServerList(t *testing.T) {
	s := startApp(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := "http://" + l.Addr().String()
	require.NoError(t, l.Close())

	r := cli(t, nil, adminPassword+"\n", "login", "--server", dead+","+s.base, "--username", "admin", "--password-stdin")
	require.Equal(t, 0, r.code, r.stderr)
	submit := func(args ...string) (result, int64) {
		r := cli(t, nil, "", append([]string{"task", "submit", "--json", "--wait-for-nodes", "--idempotency-key", "nightly-42"}, args...)...)
		var task struct{ ID int64 }
		if r.code == 0 {
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &task))
		}
		return r, task.ID
	}
	r, first := submit("--name", "nightly", "--", "true")
	require.Equal(t, 0, r.code, r.stderr)
	r, again := submit("--name", "nightly", "--", "true")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, first, again, "the retry answers the same task")

	r, _ = submit("--name", "nightly", "--", "false")
	require.NotEqual(t, 0, r.code)
	require.Contains(t, r.stderr, "idempotency_key_reused")

	r = cli(t, nil, "", "task", "list", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var list struct{ Total int }
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &list))
	require.Equal(t, 1, list.Total)
}

// TestWorkflowSubmitIdempotencyKey: `workflow submit` run again with the
// same --idempotency-key, file and parameters answers the workflow already
// created; other parameters under that key are refused with the server's
// code and a non-zero exit; nothing is stored twice.
func TestWorkflowSubmitIdempotencyKey(t *testing.T) {
	s := startApp(t)
	r := cli(t, nil, adminPassword+"\n", "login", "--server", s.base, "--username", "admin", "--password-stdin")
	require.Equal(t, 0, r.code, r.stderr)
	// A --server that is not a URL is named as such, not as another server
	// than the saved login's.
	r = cli(t, nil, "", "workflow", "list", "--server", "localhost:5333")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "must be a URL")
	doc := filepath.Join(t.TempDir(), "nightly.yaml")
	require.NoError(t, os.WriteFile(doc, []byte("name: nightly\nparams: {day: mon}\nsteps:\n  - {name: a, task: {command: [echo, '{{params.day}}']}}\n"), 0o600))
	submit := func(day string) (result, int64) {
		r := cli(t, nil, "", "workflow", "submit", "--json", "--idempotency-key", "nightly-wf-42", "--param", "day="+day, doc)
		var w struct{ ID int64 }
		if r.code == 0 {
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &w))
		}
		return r, w.ID
	}
	r, first := submit("mon")
	require.Equal(t, 0, r.code, r.stderr)
	r, again := submit("mon")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, first, again, "the retry answers the same workflow")

	r, _ = submit("tue")
	require.NotEqual(t, 0, r.code)
	require.Contains(t, r.stderr, "idempotency_key_reused")

	r = cli(t, nil, "", "workflow", "list", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var list struct{ Total int }
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &list))
	require.Equal(t, 1, list.Total)
}
