//go:build unix

package runner

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/agent/agenttest"
	"github.com/heteroflow/heteroflow/agent/credentials"
	"github.com/heteroflow/heteroflow/agent/protocol"
)

// probe is a task that reports what it can see: its environment, account,
// working directory and whether it can read the agent's credentials and
// the agent process's own environment.
const probe = `env | sort > "$HOME/env.txt"; cat "$HOME/env.txt"
echo "uid=$(id -u) gid=$(id -g)"
echo "cwd=$(pwd) mode=$(stat -c %a .) owner=$(stat -c %u .)"
if cat "$CREDS" >/dev/null 2>&1; then echo creds=READABLE; else echo creds=denied; fi
if cat "/proc/$AGENT_PID/environ" >/dev/null 2>&1; then echo agentenv=READABLE; else echo agentenv=denied; fi
`

// sandboxBase are the variables every task gets (sh adds PWD, SHLVL, _).
var sandboxBase = map[string]bool{"HOME": true, "USER": true, "LOGNAME": true, "PATH": true, "LANG": true,
	"HETEROFLOW_TASK_ID": true, "HETEROFLOW_ATTEMPT": true, "HETEROFLOW_WORK_DIR": true, "HETEROFLOW_OUTPUTS": true,
	"PWD": true, "SHLVL": true, "_": true, "OLDPWD": true}

func runProbe(t *testing.T, r *Runner, spec protocol.TaskSpec) (*Handle, map[string]string, string) {
	t.Helper()
	h, err := r.Start(context.Background(), spec)
	require.NoError(t, err)
	res := h.Wait()
	out := readAll(t, h, "stdout")
	require.Equal(t, protocol.PhaseSucceeded, res.Phase, res.Reason+"\n"+readAll(t, h, "stderr"))
	env := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && !strings.Contains(k, " ") && k == strings.ToUpper(k) {
			env[k] = v
		}
	}
	return h, env, out
}

func TestTaskSandbox(t *testing.T) {
	base := agenttest.DataDir(t)
	// The agent's secrets: a variable in its environment and its credential file.
	t.Setenv("HETEROFLOW_AGENT_SECRET", "agent-secret-value")
	t.Setenv("HETEROFLOW_ADMIN_PASSWORD", "admin-password-value")
	require.NoError(t, credentials.Save(base, credentials.Credentials{NodeID: "n1", APIKey: "hfk_agent_key"}))
	creds := credentials.Path(base)
	r := New(Config{LogDir: filepath.Join(base, "tasks"), Grace: 500 * time.Millisecond, CLI: &recorder{}, Logger: quietLogger})
	spec := protocol.TaskSpec{TaskID: 41, Attempt: 1, Command: []string{"sh", "-c", probe},
		Env:       map[string]string{"MY_VAR": "x", "CREDS": creds, "AGENT_PID": strconv.Itoa(os.Getpid())},
		SecretEnv: map[string]string{"DB_PASSWORD": "task-secret"},
		Devices:   []protocol.DeviceSlice{{Vendor: "nvidia", Index: 2, UUID: "GPU-s"}}}
	h, env, out := runProbe(t, r, spec)

	t.Run("environment is clean", func(t *testing.T) {
		require.NotContains(t, out, "agent-secret-value")
		require.NotContains(t, out, "admin-password-value")
		for k := range env {
			if sandboxBase[k] || k == "MY_VAR" || k == "CREDS" || k == "AGENT_PID" || k == "DB_PASSWORD" ||
				k == "CUDA_VISIBLE_DEVICES" || k == "NVIDIA_VISIBLE_DEVICES" {
				continue
			}
			if strings.HasPrefix(k, "UID") || strings.HasPrefix(k, "CWD") || strings.HasPrefix(k, "CREDS") {
				continue
			}
			t.Errorf("task sees %s, which neither the task nor the documented base set provides", k)
		}
		require.Equal(t, "task-secret", env["DB_PASSWORD"])
		require.Equal(t, "GPU-s", env["CUDA_VISIBLE_DEVICES"])
		require.Equal(t, DefaultTaskPath, env["PATH"])
		require.Equal(t, "41", env["HETEROFLOW_TASK_ID"])
		require.Equal(t, h.WorkDir(), env["HOME"])
	})
	t.Run("own working directory", func(t *testing.T) {
		require.Equal(t, filepath.Join(base, "work", "41-1"), h.WorkDir())
		require.Contains(t, out, "cwd="+h.WorkDir()+" mode=700 owner="+strconv.Itoa(int(h.Identity.UID))+"\n")
		_, err := os.Stat(h.WorkDir())
		require.ErrorIs(t, err, os.ErrNotExist, "the working directory is removed with the task")
	})
	if os.Geteuid() != 0 {
		t.Skip("the account switch and credential checks need root (as in CI)")
	}
	nobody, err := LookupAccount(DefaultRunAs)
	require.NoError(t, err)
	t.Run("runs as the unprivileged default account", func(t *testing.T) {
		require.Equal(t, DefaultRunAs, h.Identity.Name)
		require.Contains(t, out, "uid="+strconv.Itoa(int(nobody.UID))+" gid="+strconv.Itoa(int(nobody.GID))+"\n")
		require.Equal(t, DefaultRunAs, env["USER"])
	})
	t.Run("agent credentials and environment unreadable", func(t *testing.T) {
		st, err := os.Stat(creds)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
		require.Contains(t, out, "creds=denied\n")
		require.Contains(t, out, "agentenv=denied\n")
	})
	t.Run("task logs are the agent's", func(t *testing.T) {
		st, err := os.Stat(h.LogDir())
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o700), st.Mode().Perm())
	})
}

func TestTaskAccounts(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("switching accounts needs root (as in CI)")
	}
	daemonAcct, err := LookupAccount("daemon")
	require.NoError(t, err)
	nobody, err := LookupAccount(DefaultRunAs)
	require.NoError(t, err)
	base := agenttest.DataDir(t)
	r := New(Config{LogDir: filepath.Join(base, "tasks"), CLI: &recorder{}, Logger: quietLogger, RunAs: "daemon",
		Accounts: map[string]string{"tenant:acme": DefaultRunAs, "user:alice": "daemon", "tenant:ghost": "no-such-account-xyz"}})
	idOf := func(spec protocol.TaskSpec) string {
		spec.Command = []string{"id", "-u"}
		h, err := r.Start(context.Background(), spec)
		require.NoError(t, err)
		res := h.Wait()
		require.Equal(t, protocol.PhaseSucceeded, res.Phase, res.Reason)
		return strings.TrimSpace(readAll(t, h, "stdout"))
	}
	d, n := strconv.Itoa(int(daemonAcct.UID)), strconv.Itoa(int(nobody.UID))
	require.Equal(t, d, idOf(protocol.TaskSpec{TaskID: 50}), "node default --run-as")
	require.Equal(t, n, idOf(protocol.TaskSpec{TaskID: 51, Tenant: "acme", Owner: "bob"}), "tenant mapping")
	require.Equal(t, d, idOf(protocol.TaskSpec{TaskID: 52, Tenant: "acme", Owner: "alice"}), "user mapping wins")

	_, err = r.Start(context.Background(), protocol.TaskSpec{TaskID: 53, Tenant: "ghost", Command: []string{"true"}})
	require.ErrorContains(t, err, "no-such-account-xyz")

	root := New(Config{LogDir: filepath.Join(base, "tasks2"), CLI: &recorder{}, Logger: quietLogger, RunAs: "root"})
	_, err = root.Start(context.Background(), protocol.TaskSpec{TaskID: 54, Command: []string{"true"}})
	require.ErrorContains(t, err, "refusing to run the task as root")
	allowed := New(Config{LogDir: filepath.Join(base, "tasks3"), CLI: &recorder{}, Logger: quietLogger, RunAs: "root", AllowRoot: true})
	h, err := allowed.Start(context.Background(), protocol.TaskSpec{TaskID: 55, Command: []string{"id", "-u"}})
	require.NoError(t, err)
	h.Wait()
	require.Equal(t, "0\n", readAll(t, h, "stdout"))

	closedDir := t.TempDir()
	require.NoError(t, os.Chmod(closedDir, 0o700))
	closed := New(Config{LogDir: filepath.Join(closedDir, "tasks"), CLI: &recorder{}, Logger: quietLogger})
	_, err = closed.Start(context.Background(), protocol.TaskSpec{TaskID: 56, Command: []string{"true"}})
	require.ErrorContains(t, err, "cannot enter", "a data folder the task account cannot traverse is named")

	require.NoError(t, ValidateAccounts("daemon", map[string]string{"tenant:a": "nobody"}, false))
	require.ErrorContains(t, ValidateAccounts("root", nil, false), "--allow-root-tasks")
	require.ErrorContains(t, ValidateAccounts("", map[string]string{"group:a": "nobody"}, false), "user:NAME or tenant:NAME")
	require.ErrorContains(t, ValidateAccounts("no-such-account-xyz", nil, false), "no-such-account-xyz")
}

func TestTaskEnvOrder(t *testing.T) {
	t.Setenv("HTTPS_PROXY", "http://proxy:3128")
	t.Setenv("AGENT_ONLY", "x")
	spec := protocol.TaskSpec{TaskID: 9, Env: map[string]string{"A": "env", "PATH": "/opt/bin", "CUDA_VISIBLE_DEVICES": "all", "HETEROFLOW_TASK_ID": "1"},
		SecretEnv: map[string]string{"A": "secret"}}
	env := TaskEnv(spec, Identity{Name: "u"}, "/w", []string{"HTTPS_PROXY"}, nil, map[string]string{"CUDA_VISIBLE_DEVICES": "GPU-1"}, false)
	require.Equal(t, "secret", env["A"], "secret_env wins over env")
	require.Equal(t, "/opt/bin", env["PATH"], "the task may set its PATH")
	require.Equal(t, "GPU-1", env["CUDA_VISIBLE_DEVICES"], "devices always win")
	require.Equal(t, "9", env["HETEROFLOW_TASK_ID"])
	require.Equal(t, "http://proxy:3128", env["HTTPS_PROXY"])
	require.NotContains(t, env, "AGENT_ONLY")
}

func TestTaskOutputsFromWorkDir(t *testing.T) {
	r := newTestRunner(t, &recorder{})
	secret := filepath.Join(t.TempDir(), "agent-only")
	require.NoError(t, os.WriteFile(secret, []byte("stolen=yes\n"), 0o600))
	run := func(id int64, script string) map[string]string {
		h, err := r.Start(context.Background(), protocol.TaskSpec{TaskID: id, Command: []string{"sh", "-c", script},
			Env: map[string]string{"SECRET": secret}})
		require.NoError(t, err)
		res := h.Wait()
		require.Equal(t, protocol.PhaseSucceeded, res.Phase, res.Reason)
		outs, _ := ReadOutputs(h.LogDir())
		return outs
	}
	require.Equal(t, map[string]string{"accuracy": "0.9"}, run(60, `echo accuracy=0.9 > "$HETEROFLOW_OUTPUTS"`))
	// A link planted by the task is not followed with the agent's rights.
	require.Nil(t, run(61, `ln -s "$SECRET" "$HETEROFLOW_OUTPUTS"`))
}
