//go:build linux

package daemon_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/agent/agenttest"
	"github.com/heteroflow/heteroflow/agent/daemon"
	"github.com/heteroflow/heteroflow/agent/procgroup"
	"github.com/heteroflow/heteroflow/agent/state"
	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/receivers/smi"
)

// envAgentProcess makes the test binary run as a real agent process (see
// TestMain), so a test can kill -9 it.
const envAgentProcess = "HETEROFLOW_TEST_AGENT_PROCESS"

func TestMain(m *testing.M) {
	if spec := os.Getenv(envAgentProcess); spec != "" {
		os.Exit(agentProcess(spec))
	}
	os.Exit(m.Run())
}

type agentProcessSpec struct {
	Server, Token, DataDir string
}

// agentProcess runs daemon.Run until SIGTERM (or SIGKILL from the test).
func agentProcess(raw string) int {
	var s agentProcessSpec
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	noDevices := func(context.Context, string, ...string) ([]byte, error) { return nil, smi.ErrToolNotFound }
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	err := daemon.Run(ctx, daemon.Config{Server: s.Server, Token: s.Token, DataDir: s.DataDir,
		Heartbeat: 300 * time.Millisecond, PollWait: 2 * time.Second, Grace: time.Second, Logger: quiet, SMI: noDevices})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func startAgentProcess(t *testing.T, s *stack, token, dataDir string) *exec.Cmd {
	t.Helper()
	raw, _ := json.Marshal(agentProcessSpec{Server: s.url(), Token: token, DataDir: dataDir})
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envAgentProcess+"="+string(raw))
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	s.t.Cleanup(func() { // the whole test's, not a subtest's: agents outlive subtests
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return cmd
}

func kill9(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
}

// runningRecord waits until the agent's state file records task id.
func runningRecord(t *testing.T, dataDir string, id int64) state.Record {
	t.Helper()
	var rec state.Record
	waitFor(t, "task recorded as running", func() bool {
		st, err := state.Open(filepath.Join(dataDir, "state.json"))
		if err != nil {
			return false
		}
		for _, r := range st.List() {
			if r.TaskID == id && r.ShimPID != 0 {
				rec = r
				return true
			}
		}
		return false
	})
	return rec
}

// TestOrphanPolicyAfterAgentKill9: the agent process is killed with SIGKILL
// while its task runs. A task whose shim survives is adopted by the next
// agent (real exit code, whole output); a task that ended meanwhile is
// reported from its exit record; a task whose shim is gone too is killed
// and reported failed with the reason.
func TestOrphanPolicyAfterAgentKill9(t *testing.T) {
	dir := agenttest.DataDir(t)
	s := startStack(t, filepath.Join(dir, "hf.db"), "127.0.0.1:0")
	defer func() { s.kill() }()
	var tok struct{ Token string }
	require.Equal(t, http.StatusCreated, s.call("POST", "/api/v1/bootstrap-tokens", map[string]any{"description": "orphans"}, &tok))
	dataDir := filepath.Join(dir, "agent")
	agent := startAgentProcess(t, s, tok.Token, dataDir)
	var nodeID string
	waitFor(t, "node registered", func() bool {
		nodes, _, _ := s.db.ListNodes(context.Background(), controlplane.NodeFilter{})
		if len(nodes) == 1 {
			nodeID = nodes[0].ID
		}
		return nodeID != ""
	})
	assign := func(t *testing.T, cmd string) int64 {
		id := s.task("sh", "-c", cmd)
		require.Equal(t, 200, s.call("POST", fmt.Sprintf("/api/v1/tasks/%d/assign", id), map[string]any{"node_id": nodeID}, nil))
		waitFor(t, "task running", func() bool { return s.state(id) == controlplane.TaskRunning })
		return id
	}
	logsOf := func(t *testing.T, id int64, want string) {
		var lg struct{ Data string }
		waitFor(t, "logs shipped", func() bool {
			return s.call("GET", fmt.Sprintf("/api/v1/tasks/%d/logs", id), nil, &lg) == 200 && lg.Data == want
		})
	}
	get := func(id int64) *controlplane.Task {
		tk, err := s.db.GetTask(context.Background(), id)
		require.NoError(t, err)
		return tk
	}

	t.Run("adopted when the shim still runs", func(t *testing.T) {
		id := assign(t, `echo before; while [ ! -e "$HOME/go" ]; do sleep 0.05; done; echo after
			while [ ! -e "$HOME/end" ]; do sleep 0.05; done; exit 3`)
		rec := runningRecord(t, dataDir, id)
		kill9(t, agent)
		require.True(t, procgroup.Running(rec.ShimPID, rec.ShimStart), "the shim outlives the agent")
		require.True(t, procgroup.Alive(rec.PGID), "the task outlives the agent")
		// The task goes on writing while no agent runs.
		require.NoError(t, os.WriteFile(filepath.Join(rec.WorkDir, "go"), nil, 0o644))
		waitFor(t, "task wrote after the agent died", func() bool {
			b, _ := os.ReadFile(filepath.Join(rec.LogDir, "stdout.00000000000000000000.log"))
			return strings.Contains(string(b), "after")
		})
		require.Equal(t, controlplane.TaskRunning, s.state(id))
		restarted := time.Now()
		agent = startAgentProcess(t, s, "", dataDir)
		// The new agent heartbeats with the adopted task among its running ones.
		waitFor(t, "new agent reports the adopted task", func() bool {
			n, err := s.db.GetNode(context.Background(), nodeID)
			return err == nil && n.LastHeartbeat != nil && n.LastHeartbeat.After(restarted) &&
				strings.Contains(string(n.Running), fmt.Sprintf(`"task_id":%d`, id))
		})
		require.True(t, procgroup.Running(rec.ShimPID, rec.ShimStart))
		require.NoError(t, os.WriteFile(filepath.Join(rec.WorkDir, "end"), nil, 0o644))
		waitFor(t, "adopted task reported", func() bool { return s.state(id) == controlplane.TaskFailed })
		tk := get(id)
		require.NotNil(t, tk.ExitCode)
		require.Equal(t, 3, *tk.ExitCode, "the real exit code, read from the shim's record")
		require.Equal(t, "exit code 3", tk.Reason)
		logsOf(t, id, "before\nafter\n")
	})

	t.Run("reported from the exit record when it ended meanwhile", func(t *testing.T) {
		id := assign(t, `echo short; sleep 0.3`)
		rec := runningRecord(t, dataDir, id)
		kill9(t, agent)
		waitFor(t, "shim finished", func() bool { return !procgroup.Running(rec.ShimPID, rec.ShimStart) })
		agent = startAgentProcess(t, s, "", dataDir)
		waitFor(t, "ended task reported", func() bool { return s.state(id) == controlplane.TaskSucceeded })
		require.Equal(t, 0, *get(id).ExitCode)
		logsOf(t, id, "short\n")
	})

	t.Run("killed and reported when the shim is gone", func(t *testing.T) {
		id := assign(t, `sleep 600`)
		rec := runningRecord(t, dataDir, id)
		kill9(t, agent)
		require.NoError(t, syscall.Kill(rec.ShimPID, syscall.SIGKILL))
		waitFor(t, "shim gone", func() bool { return !procgroup.Running(rec.ShimPID, rec.ShimStart) })
		require.True(t, procgroup.Alive(rec.PGID), "the task itself still runs")
		agent = startAgentProcess(t, s, "", dataDir)
		waitFor(t, "orphan reported", func() bool { return s.state(id) == controlplane.TaskFailed })
		require.Contains(t, get(id).Reason, "orphaned task process group killed")
		waitFor(t, "orphan's group killed", func() bool { return !procgroup.Alive(rec.PGID) })
		_, err := os.Stat(rec.WorkDir)
		require.ErrorIs(t, err, os.ErrNotExist)
	})
	kill9(t, agent)
}
