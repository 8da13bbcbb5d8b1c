package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/agent/agenttest"
	"github.com/heteroflow/heteroflow/controlplane/app"
	"github.com/heteroflow/heteroflow/controlplane/server"
)

// The test binary doubles as the heteroflow binary: with
// HETEROFLOW_CLI_TEST_MAIN set it runs main() on its arguments, so the CLI
// is tested as a user runs it (exit status, stdout, stderr).
func TestMain(m *testing.M) {
	if os.Getenv("HETEROFLOW_CLI_TEST_MAIN") == "1" {
		os.Args = append([]string{"heteroflow"}, os.Args[1:]...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type result struct {
	code           int
	stdout, stderr string
}

// cli runs the binary with args in a private config home.
func cli(t *testing.T, env map[string]string, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), "HETEROFLOW_CLI_TEST_MAIN=1", "XDG_CONFIG_HOME="+configHome(t), "TZ=UTC")
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return result{code, out.String(), errb.String()}
}

var homes = map[*testing.T]string{}

func configHome(t *testing.T) string {
	if h, ok := homes[t]; ok {
		return h
	}
	homes[t] = t.TempDir()
	return homes[t]
}

func TestUnknownSubcommandsFail(t *testing.T) {
	for _, args := range [][]string{{"tsk"}, {"task", "lsit"}, {"task", "bogus"}, {"smi", "detcet"}} {
		r := cli(t, nil, "", args...)
		require.Equal(t, 1, r.code, "%v: %+v", args, r)
		require.Contains(t, r.stderr, "unknown command", "%v", args)
	}
	r := cli(t, nil, "", "task", "lsit")
	require.Contains(t, r.stderr, "list", "suggests the closest command")
	r = cli(t, nil, "", "task")
	require.Equal(t, 0, r.code, "a group without arguments prints its help")
	require.Contains(t, r.stdout, "logs")
}

// Every command the README's command-line section shows exists.
func TestReadmeCommandsExist(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	lines := regexp.MustCompile(`(?m)^heteroflow ([a-z][a-z-]*(?: [a-z][a-z-]*)?)`).FindAllStringSubmatch(string(b), -1)
	require.NotEmpty(t, lines)
	for _, l := range lines {
		words := strings.Fields(l[1])
		c, rest, err := rootCmd.Find(words)
		require.NoError(t, err, l[0])
		require.NotEqual(t, rootCmd, c, l[0])
		if len(rest) > 0 {
			require.False(t, c.HasSubCommands(), "%s: %q is not a subcommand of %s", l[0], rest[0], c.CommandPath())
		}
	}
}

// The README's sim example runs on a fresh clone (the sample trace ships).
func TestReadmeSimExampleRuns(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^heteroflow sim (.*)$`).FindStringSubmatch(string(b))
	require.NotNil(t, m)
	args := append([]string{"sim"}, strings.Fields(m[1])...)
	for i, a := range args {
		if i > 0 && (args[i-1] == "--nodes" || args[i-1] == "--tasks") {
			args[i] = filepath.Join("..", "..", a)
		}
	}
	r := cli(t, nil, "", append(args[:len(args):len(args)], "--seeds", "42")...)
	require.Equal(t, 0, r.code, r.stderr)
	var rep struct {
		Allocation map[string]*struct{ Mean float64 } `json:"allocation_percent"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep), r.stdout)
	require.NotNil(t, rep.Allocation["100"], "the sample is large enough to reach 100%% arrived demand: %s", r.stdout)
}

func TestSMIDetectNamesTheTools(t *testing.T) {
	r := cli(t, map[string]string{"PATH": t.TempDir()}, "", "smi", "detect")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "[]\n", r.stdout)
	for _, tool := range []string{"nvidia-smi", "npu-smi", "rocm-smi", "cnmon"} {
		require.Contains(t, r.stderr, tool)
	}
}

func TestLoginDefaultsAndErrors(t *testing.T) {
	s := startApp(t)
	r := cli(t, nil, "", "login", "--password-stdin")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "--username is required")
	require.NotContains(t, r.stderr, "--server", "the server has a default")

	// No --server: $HETEROFLOW_SERVER, else the documented default.
	r = cli(t, map[string]string{"HETEROFLOW_SERVER": s.base}, adminPassword+"\n", "login", "--username", "admin", "--password-stdin")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "Logged in to "+s.base)
	r = cli(t, nil, "", "login", "--help")
	require.Contains(t, r.stdout, `(default "http://localhost:3333")`)
}

const adminPassword = "Cli-Root-Passw0rd!"

type appServer struct {
	app  *app.App
	base string
}

func startApp(t *testing.T) *appServer { return startAppWith(t, nil) }

// startAppWith is startApp with its configuration changed by edit first.
func startAppWith(t *testing.T, edit func(*server.Config)) *appServer {
	t.Helper()
	cfg := server.Defaults()
	cfg.APIAddr, cfg.ConsoleAddr = "127.0.0.1:0", ""
	cfg.DataDir = t.TempDir()
	if edit != nil {
		edit(&cfg)
	}
	env := map[string]string{server.EnvAdminPassword: adminPassword}
	a, err := app.New(t.Context(), cfg, server.Options{Logger: slog.New(slog.DiscardHandler), Stderr: io.Discard,
		Getenv: func(k string) string { return env[k] }, Version: "cli-test"})
	require.NoError(t, err)
	require.NoError(t, a.Start())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, a.Shutdown(ctx))
	})
	return &appServer{app: a, base: "http://" + a.APIAddr()}
}

// startAgent runs a CPU-only agent (no vendor CLI on its PATH) enrolled
// with a fresh bootstrap token, as its own process.
func startAgent(t *testing.T, base, name string) {
	t.Helper()
	r := cli(t, nil, "", "task", "list") // the saved login of this test
	require.Equal(t, 0, r.code, r.stderr)
	creds, err := os.ReadFile(filepath.Join(configHome(t), "heteroflow", "credentials.json"))
	require.NoError(t, err)
	var cr struct {
		AccessToken string `json:"access_token"`
	}
	require.NoError(t, json.Unmarshal(creds, &cr))
	req, _ := http.NewRequest(http.MethodPost, base+"/api/v1/bootstrap-tokens", strings.NewReader(`{"description":"cli test"}`))
	req.Header.Set("Authorization", "Bearer "+cr.AccessToken)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	var tok struct{ Token string }
	require.NoError(t, json.NewDecoder(res.Body).Decode(&tok))
	res.Body.Close()
	require.NotEmpty(t, tok.Token)

	ctx, cancel := context.WithCancel(context.Background())
	dir := agenttest.DataDir(t) // tasks run as an unprivileged account
	cmd := exec.CommandContext(ctx, os.Args[0], "agent", "--server", base, "--token", tok.Token, "--data-dir", dir,
		"--name", name, "--no-collector", "--heartbeat", "1s", "--poll-wait", "2s")
	cmd.Env = append(os.Environ(), "HETEROFLOW_CLI_TEST_MAIN=1", "PATH="+filepath.Dir(mustLook(t, "sh")))
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("agent log:\n%s", logs.String())
		}
	})
}

func mustLook(t *testing.T, name string) string {
	p, err := exec.LookPath(name)
	require.NoError(t, err)
	return p
}

func TestTaskLogsFollowAndGetShowsPlacement(t *testing.T) {
	s := startApp(t)
	r := cli(t, nil, adminPassword+"\n", "login", "--server", s.base, "--username", "admin", "--password-stdin")
	require.Equal(t, 0, r.code, r.stderr)
	startAgent(t, s.base, "cli-node")

	r = cli(t, nil, "", "task", "submit", "--name", "echoes", "--json", "--", "sh", "-c", "echo first line; sleep 3; echo 'second line'")
	require.Equal(t, 0, r.code, r.stderr)
	var task struct{ ID int64 }
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &task))
	id := strconvI(task.ID)

	// --follow prints output as it comes and returns when the task ends.
	start := time.Now()
	r = cli(t, nil, "", "task", "logs", id, "--follow", "--interval", "200ms")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "first line\nsecond line\n", r.stdout)
	require.Less(t, time.Since(start), 90*time.Second)

	r = cli(t, nil, "", "task", "logs", id)
	require.Equal(t, "first line\nsecond line\n", r.stdout, "without --follow: what is there now")
	r = cli(t, nil, "", "task", "logs", id, "--stream", "stdin")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "--stream must be stdout or stderr")

	r = cli(t, nil, "", "task", "get", id)
	require.Equal(t, 0, r.code, r.stderr)
	fields := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "  ")
		fields[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	require.Equal(t, "succeeded", fields["state / 状态"], r.stdout)
	require.True(t, strings.HasPrefix(fields["node / 节点"], "cli-node-"), "node named by --name: %s", r.stdout)
	require.NotEqual(t, "—", fields["placement / 放置"], r.stdout)
	require.Contains(t, fields["command / 命令"], `sh -c 'echo first line; sleep 3; echo '\''second line'\'''`)
	// One timestamp format everywhere: RFC 3339 to the second (TZ=UTC here).
	rfc := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d)$`)
	for _, k := range []string{"created / 创建", "started / 开始", "finished / 结束"} {
		require.Regexp(t, rfc, fields[k], "%s in %s", k, r.stdout)
	}
	// A task that only wrote to stderr: the empty stdout says where to look.
	r = cli(t, nil, "", "task", "submit", "--name", "oops", "--json", "--", "sh", "-c", "echo oops >&2; exit 3")
	require.Equal(t, 0, r.code, r.stderr)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &task))
	r = cli(t, nil, "", "task", "logs", strconvI(task.ID), "--follow", "--interval", "200ms")
	require.Equal(t, 0, r.code, r.stderr)
	require.Empty(t, r.stdout)
	require.Contains(t, r.stderr, "--stream stderr", "the hint names the other stream")
	require.Contains(t, r.stderr, "标准错误")
	r = cli(t, nil, "", "task", "logs", strconvI(task.ID), "--stream", "stderr")
	require.Equal(t, "oops\n", r.stdout)

	r = cli(t, nil, "", "task", "list")
	require.Regexp(t, `(?m)^ID\s+NAME / 名称\s+STATE / 状态\s`, r.stdout, "column names in both languages")
	require.Regexp(t, regexp.MustCompile(`echoes\s+succeeded\s+admin\s+0\s+\S*\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`), r.stdout)
}

func strconvI(v int64) string { return strconv.FormatInt(v, 10) }

// hetero-gen turns the openb sample into a mixed fleet (same seed, same
// files), and sim compares three profiles on it per vendor in one run.
func TestSimHeteroBenchmark(t *testing.T) {
	dir := t.TempDir()
	sample := filepath.Join("..", "..", "scheduler", "testdata", "openb-sample")
	gen := func(name string, seed string) []byte {
		nodes, tasks := filepath.Join(dir, name+"-nodes.json"), filepath.Join(dir, name+"-tasks.json")
		r := cli(t, nil, "", "sim", "hetero-gen", "--nodes", filepath.Join(sample, "nodes.csv"), "--tasks", filepath.Join(sample, "pods.csv"),
			"--seed", seed, "--out-nodes", nodes, "--out-tasks", tasks)
		require.Equal(t, 0, r.code, r.stderr)
		a, err := os.ReadFile(nodes)
		require.NoError(t, err)
		b, err := os.ReadFile(tasks)
		require.NoError(t, err)
		return append(a, b...)
	}
	first := gen("a", "7")
	require.Equal(t, first, gen("b", "7"), "deterministic by seed")
	require.NotEqual(t, first, gen("c", "8"))

	r := cli(t, nil, "", "sim", "--nodes", filepath.Join(dir, "a-nodes.json"), "--tasks", filepath.Join(dir, "a-tasks.json"),
		"--compare", "default,bestfit,fgd", "--metric", "slicing", "--seeds", "42")
	require.Equal(t, 0, r.code, r.stderr)
	var out struct {
		Profiles map[string]struct {
			Allocation map[string]*struct{ Mean float64 } `json:"allocation_percent"`
			ByVendor   map[string]struct {
				Devices    int                                `json:"devices"`
				Allocation map[string]*struct{ Mean float64 } `json:"allocation_percent"`
			} `json:"by_vendor"`
		} `json:"profiles"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), r.stdout)
	require.Len(t, out.Profiles, 3)
	for name, rep := range out.Profiles {
		require.NotNil(t, rep.Allocation["100"], name)
		for _, v := range []string{"nvidia", "ascend", "cambricon", "hygon", "biren"} {
			require.Positive(t, rep.ByVendor[v].Devices, "%s: %s devices", name, v)
			require.NotNil(t, rep.ByVendor[v].Allocation["100"], "%s: %s", name, v)
		}
	}
	r = cli(t, nil, "", "sim", "--nodes", filepath.Join(dir, "a-nodes.json"), "--tasks", filepath.Join(dir, "a-tasks.json"),
		"--compare", "default,fgd", "--metric", "slicing", "--seeds", "42", "--format", "table")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "ascend (")
	require.Contains(t, r.stdout, "| fgd |")

	r = cli(t, nil, "", "sim", "--nodes", filepath.Join(dir, "a-nodes.json"), "--tasks", filepath.Join(dir, "a-tasks.json"), "--metric", "mig")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "--metric must be fgd or slicing")
	r = cli(t, nil, "", "sim", "hetero-gen", "--nodes", filepath.Join(sample, "nodes.csv"))
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "are required")
}

// The README's list of the binary's commands names every one a user can run.
func TestReadmeListsEveryCommand(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	row := regexp.MustCompile("(?m)^\\| `cmd/heteroflow` \\|(.*)$").FindStringSubmatch(string(b))
	require.NotNil(t, row, "the README's folder table has the cmd/heteroflow row")
	for _, c := range rootCmd.Commands() {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		require.Contains(t, row[1], "`"+c.Name()+"`", "the README lists %s", c.Name())
	}
}
