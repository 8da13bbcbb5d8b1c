package main

import (
	"encoding/json"
	"net"
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
