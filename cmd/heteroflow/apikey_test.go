package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A logged-in user makes an API key from the CLI, uses it with the other
// client commands, sees it listed and revokes it; bad input is refused
// with the reason.
func TestAPIKeyCLI(t *testing.T) {
	s := startApp(t)
	r := cli(t, map[string]string{"HETEROFLOW_SERVER": s.base}, adminPassword+"\n", "login", "--username", "admin", "--password-stdin")
	require.Equal(t, 0, r.code, r.stderr)

	r = cli(t, nil, "", "apikey", "create", "--name", "ci-bot", "--role", "viewer", "--expires-in", "24h")
	require.Equal(t, 0, r.code, r.stderr)
	key := strings.TrimSpace(r.stdout)
	require.Regexp(t, `^hf_[0-9a-f]+_\S+$`, key, "only the key on stdout")
	require.Contains(t, r.stderr, "shown only this once")

	env := map[string]string{"HETEROFLOW_SERVER": s.base, "HETEROFLOW_API_KEY": key}
	r = cli(t, env, "", "task", "list")
	require.Equal(t, 0, r.code, "the new key works: %s", r.stderr)

	r = cli(t, nil, "", "apikey", "list")
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `(?m)^(\d+)\s+ci-bot\s+[0-9a-f]+\s+viewer\s`, r.stdout)
	id := regexpFind(t, `(?m)^(\d+)\s+ci-bot\s`, r.stdout)

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"apikey", "create", "--role", "user"}, "--name is required"},
		{[]string{"apikey", "create", "--name", "x", "--role", "god"}, "role"},
		{[]string{"apikey", "create", "--name", "x", "--expires-in", "-1h"}, "--expires-in must be positive"},
		{[]string{"apikey", "revoke", "abc"}, "positive number"},
		{[]string{"apikey", "revoke", "987654"}, "not found"},
	} {
		r = cli(t, nil, "", tc.args...)
		require.Equal(t, 1, r.code, "%v: %+v", tc.args, r)
		require.Contains(t, r.stderr, tc.want, "%v", tc.args)
		require.Regexp(t, han, r.stderr, "%v", tc.args)
	}

	r = cli(t, nil, "", "apikey", "revoke", id)
	require.Equal(t, 0, r.code, r.stderr)
	r = cli(t, env, "", "task", "list")
	require.Equal(t, 1, r.code, "a revoked key stops working")
	require.Contains(t, r.stderr, "HTTP 401")
}

func regexpFind(t *testing.T, re, s string) string {
	t.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(s)
	require.NotNil(t, m, "%s in %s", re, s)
	return m[1]
}
