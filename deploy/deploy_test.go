package deploy

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

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
