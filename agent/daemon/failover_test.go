//go:build unix

package daemon_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/agent/agenttest"
	"github.com/heteroflow/heteroflow/agent/daemon"
	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/receivers/smi"
)

// extraServer serves the stack's API on another address (a second server
// of one control plane: the same store and keys behind another listener).
func extraServer(t *testing.T, s *stack, addr string) *http.Server {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	srv := &http.Server{Handler: s.srv.Handler}
	go srv.Serve(ln) //nolint:errcheck // ends with Close
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}

// noDevices is a node without accelerators (no vendor CLI found).
func noDevices(context.Context, string, ...string) ([]byte, error) { return nil, smi.ErrToolNotFound }

// TestAgentFailsOverBetweenServers: an agent given several servers — a
// list, then one DNS name resolving to two addresses — keeps its node
// (no second enrolment), heartbeats, long-polls and reports through the
// survivor when the server it used dies, and a task assigned after the
// death runs to the end with every status delivered.
func TestAgentFailsOverBetweenServers(t *testing.T) {
	cases := []struct {
		name string
		// servers returns the --server value and the lookup for names.
		servers func(a, b string) (string, func(context.Context, string) ([]string, error))
	}{
		{"list", func(a, b string) (string, func(context.Context, string) ([]string, error)) {
			return "http://" + a + ",http://" + b, nil
		}},
		{"dns name with two addresses", func(a, b string) (string, func(context.Context, string) ([]string, error)) {
			_, port, _ := net.SplitHostPort(a)
			return "http://hf.test:" + port, func(_ context.Context, host string) ([]string, error) {
				if host != "hf.test" {
					return nil, fmt.Errorf("unknown host %s", host)
				}
				return []string{"127.0.0.1", "127.0.0.2"}, nil
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := agenttest.DataDir(t)
			s := startStack(t, filepath.Join(dir, "hf.db"), "127.0.0.1:0")
			defer s.kill()
			_, port, _ := net.SplitHostPort(s.addr)
			// Server B on the same port of another loopback address, so a
			// name can resolve to both.
			extraServer(t, s, "127.0.0.2:"+port)
			server, lookup := tc.servers(s.addr, "127.0.0.2:"+port)

			var tok struct{ Token string }
			require.Equal(t, http.StatusCreated, s.call("POST", "/api/v1/bootstrap-tokens", map[string]any{"description": "ha"}, &tok))
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				done <- daemon.Run(ctx, daemon.Config{Server: server, LookupHost: lookup, Token: tok.Token,
					DataDir: filepath.Join(dir, "agent"), Heartbeat: 200 * time.Millisecond, PollWait: 2 * time.Second,
					Grace: time.Second, Logger: quiet, SMI: noDevices})
			}()
			defer func() { cancel(); <-done }()
			var node *controlplane.Node
			waitFor(t, "node registered", func() bool {
				ns, _, err := s.db.ListNodes(context.Background(), controlplane.NodeFilter{})
				if err == nil && len(ns) == 1 {
					node = ns[0]
				}
				_, ferr := os.Stat(filepath.Join(dir, "agent", "credentials.json"))
				return node != nil && ferr == nil
			})
			creds, err := os.ReadFile(filepath.Join(dir, "agent", "credentials.json"))
			require.NoError(t, err)

			run := func(what string) {
				id := s.task("sh", "-c", "echo "+what)
				require.Equal(t, 200, s.call("POST", fmt.Sprintf("/api/v1/tasks/%d/assign", id), map[string]any{"node_id": node.ID}, nil))
				waitFor(t, what+" succeeded", func() bool { return s.state(id) == controlplane.TaskSucceeded })
			}
			run("before")

			// The first server dies: connections dropped, nothing listens.
			// B keeps the store (the stack's handler); A's listener is gone.
			require.NoError(t, s.srv.Close())
			s.addr = "127.0.0.2:" + port // the test's own calls go to B too
			seen := func() time.Time {
				n, err := s.db.GetNode(context.Background(), node.ID)
				require.NoError(t, err)
				if n.LastHeartbeat == nil {
					return time.Time{}
				}
				return *n.LastHeartbeat
			}
			before := seen()
			waitFor(t, "heartbeats through the survivor", func() bool { return seen().After(before.Add(500 * time.Millisecond)) })
			run("after")

			// Same node, same credentials: no second enrolment.
			ns, _, err := s.db.ListNodes(context.Background(), controlplane.NodeFilter{})
			require.NoError(t, err)
			require.Len(t, ns, 1)
			require.Equal(t, node.ID, ns[0].ID)
			after, err := os.ReadFile(filepath.Join(dir, "agent", "credentials.json"))
			require.NoError(t, err)
			require.Equal(t, string(creds), string(after))
		})
	}
}
