package deploy

import (
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// No Docker engine here: the container files are checked statically.
func TestDockerfileIsMultiStageNonRoot(t *testing.T) {
	b, err := os.ReadFile("Dockerfile")
	require.NoError(t, err)
	s := string(b)
	require.GreaterOrEqual(t, len(regexp.MustCompile(`(?m)^FROM `).FindAllString(s, -1)), 2)
	users := regexp.MustCompile(`(?m)^USER (\S+)`).FindAllStringSubmatch(s, -1)
	require.NotEmpty(t, users)
	last := users[len(users)-1][1]
	require.NotContains(t, []string{"root", "0", "0:0"}, last)
	require.Contains(t, s, "COPY --from=build")
}

func TestComposeHasServerPostgresAgent(t *testing.T) {
	b, err := os.ReadFile("docker-compose.yml")
	require.NoError(t, err)
	var c struct {
		Services map[string]struct {
			Command     []string          `yaml:"command"`
			Environment map[string]string `yaml:"environment"`
			DependsOn   map[string]any    `yaml:"depends_on"`
		} `yaml:"services"`
	}
	require.NoError(t, yaml.Unmarshal(b, &c))
	require.Contains(t, c.Services, "postgres")
	require.Contains(t, c.Services["server"].Environment["HETEROFLOW_DB"], "postgres://")
	require.Contains(t, c.Services["server"].DependsOn, "postgres")
	require.Equal(t, "agent", c.Services["agent"].Command[0])
	require.Contains(t, c.Services["agent"].DependsOn, "server")
}

func TestScriptsParse(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	for _, f := range []string{"deploy-agent-all-in-one.sh", "manage-services.sh", "dev-run.sh", "test-deploy-agent.sh"} {
		out, err := exec.Command("bash", "-n", f).CombinedOutput()
		require.NoError(t, err, "%s: %s", f, out)
	}
	require.True(t, strings.HasPrefix(string(AgentScript), "#!/usr/bin/env bash"))
}

func TestDeployScriptNamesFailedStep(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	cmd := exec.Command("bash", "deploy-agent-all-in-one.sh", "--prefix", t.TempDir())
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")} // no --server
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	require.Equal(t, 11, ee.ExitCode())
	require.Contains(t, string(out), "step 1 failed")
}

// The container files, checked without a Docker engine: every base image
// pinned to an exact version, the runtime stage non-root with a health
// check, and the binary it copies is the one the Makefile's `go` target
// (part of `make build`) writes for the image's platform.
func TestDockerfilePinnedNonRootHealthyMakeBinary(t *testing.T) {
	b, err := os.ReadFile("Dockerfile")
	require.NoError(t, err)
	s := string(b)
	pinned := regexp.MustCompile(`^[a-z0-9./_-]+:\d+(\.\d+)+(-[a-z0-9.]+)?(@sha256:[0-9a-f]{64})?$`)
	froms := regexp.MustCompile(`(?m)^FROM\s+(\S+)(?:\s+AS\s+(\S+))?`).FindAllStringSubmatch(s, -1)
	require.GreaterOrEqual(t, len(froms), 2)
	for _, f := range froms {
		require.Regexp(t, pinned, f[1], "base image %s must name an exact version", f[1])
	}
	// The last stage is the runtime: non-root user, health check.
	runtime := s[strings.LastIndex(s, "\nFROM "):]
	users := regexp.MustCompile(`(?m)^USER (\S+)`).FindAllStringSubmatch(runtime, -1)
	require.NotEmpty(t, users, "the runtime stage sets a USER")
	require.NotContains(t, []string{"root", "0", "0:0"}, users[len(users)-1][1])
	require.Regexp(t, `(?m)^HEALTHCHECK .*CMD .*/health`, runtime)

	// The build stage runs `make go`, and the runtime copies what it wrote.
	mk, err := os.ReadFile("../Makefile")
	require.NoError(t, err)
	bin := regexp.MustCompile(`(?m)^BIN :=\s*(\S+)`).FindStringSubmatch(string(mk))
	require.NotNil(t, bin)
	require.Regexp(t, `(?m)^build:.*\bgo\b`, string(mk), "make build includes the go target")
	require.Regexp(t, `(?m)^RUN .*\bmake go\b`, s)
	workdir := ""
	stage := ""
	for _, line := range strings.Split(s, "\n") {
		if m := regexp.MustCompile(`^FROM\s+\S+(?:\s+AS\s+(\S+))?`).FindStringSubmatch(line); m != nil {
			stage = m[1]
		}
		if m := regexp.MustCompile(`^WORKDIR\s+(\S+)`).FindStringSubmatch(line); m != nil && stage == "build" {
			workdir = m[1]
		}
	}
	require.NotEmpty(t, workdir)
	cp := regexp.MustCompile(`(?m)^COPY --from=build (\S+) (\S+)`).FindStringSubmatch(runtime)
	require.NotNil(t, cp, "the runtime copies the binary from the build stage")
	require.Equal(t, path.Join(workdir, bin[1]), cp[1], "the copied binary is the one `make go` writes")
	require.Contains(t, runtime, `ENTRYPOINT ["`+cp[2]+`"]`)
}

func TestComposePinnedAndHealthy(t *testing.T) {
	b, err := os.ReadFile("docker-compose.yml")
	require.NoError(t, err)
	var c struct {
		Services map[string]struct {
			Image       string         `yaml:"image"`
			Build       map[string]any `yaml:"build"`
			Healthcheck map[string]any `yaml:"healthcheck"`
			DependsOn   map[string]struct {
				Condition string `yaml:"condition"`
			} `yaml:"depends_on"`
		} `yaml:"services"`
	}
	require.NoError(t, yaml.Unmarshal(b, &c))
	for name, svc := range c.Services {
		if svc.Image != "" {
			require.Regexp(t, `:v?\d+(\.\d+)+`, svc.Image, "%s: image pinned to a version", name)
		} else {
			require.Equal(t, "deploy/Dockerfile", svc.Build["dockerfile"], name)
		}
	}
	require.NotEmpty(t, c.Services["postgres"].Healthcheck)
	require.Equal(t, "service_healthy", c.Services["server"].DependsOn["postgres"].Condition)
	// The agent waits for a healthy server: the image's HEALTHCHECK.
	require.Equal(t, "service_healthy", c.Services["agent"].DependsOn["server"].Condition)
}

// The Windows agent is a documented artefact of make build.
func TestWindowsAgentIsBuiltAndDocumented(t *testing.T) {
	mk, err := os.ReadFile("../Makefile")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^WINDOWS_BIN :=\s*(\S+)`).FindStringSubmatch(string(mk))
	require.NotNil(t, m)
	require.Regexp(t, `(?m)^build:.*\bwindows\b`, string(mk))
	require.Regexp(t, `GOOS=windows GOARCH=amd64 .*-o \$\(WINDOWS_BIN\)`, string(mk))
	doc, err := os.ReadFile("README.md")
	require.NoError(t, err)
	for _, want := range []string{path.Base(m[1]), "sc.exe create heteroflow-agent", "docker compose", "Upgrade", "Uninstall"} {
		require.Contains(t, string(doc), want)
	}
}

// make run's script stops at once when the server exits during start and
// shows the server's own error, not only where its log is.
func TestDevRunShowsWhyTheServerDidNotStart(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl")
	}
	base, err := os.MkdirTemp("", "hf-devrun-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	require.NoError(t, os.Chmod(base, 0o755)) // tasks' account (nobody under root) must enter it
	bin := filepath.Join(base, "heteroflow")
	require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\necho 'heteroflow: error: HETEROFLOW_ADMIN_PASSWORD: invalid input: password must not contain the username' >&2\nexit 1\n"), 0o755))
	cmd := exec.Command("bash", "dev-run.sh")
	cmd.Env = append(os.Environ(), "HETEROFLOW_BIN="+bin, "HETEROFLOW_DEV_DIR="+filepath.Join(base, "dev"),
		"HETEROFLOW_API_ADDR=127.0.0.1:1", "HETEROFLOW_CONSOLE_ADDR=127.0.0.1:1", "HETEROFLOW_ADMIN_PASSWORD=x")
	start := time.Now()
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "%s", out)
	require.Contains(t, string(out), "password must not contain the username", "the server's reason is shown")
	require.Less(t, time.Since(start), 15*time.Second, "no 30 s wait for a server that has exited")
}
