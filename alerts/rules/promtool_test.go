package rules

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// promtool is Debian's prometheus package's tool (make deps installs it).
func promtool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" || os.Getenv("HETEROFLOW_REQUIRE_PROMTOOL") != "" {
			t.Fatal("promtool is required: apt-get install prometheus")
		}
		t.Skip("promtool not installed (make deps installs Debian's prometheus)")
	}
	return p
}

// TestPromtoolCheck runs `promtool check rules` on every shipped file.
func TestPromtoolCheck(t *testing.T) {
	bin := promtool(t)
	for _, name := range Names {
		out, err := exec.Command(bin, "check", "rules", name).CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Contains(t, string(out), "SUCCESS")
	}
}

// TestPromtoolUnit runs `promtool test rules` on every *_test.yml, and holds
// every shipped alert to having at least one unit test.
func TestPromtoolUnit(t *testing.T) {
	bin := promtool(t)
	tests, err := filepath.Glob("*_test.yml")
	require.NoError(t, err)
	require.Len(t, tests, len(Names), "one test file per rule file")
	var all strings.Builder
	for _, f := range tests {
		out, err := exec.Command(bin, "test", "rules", f).CombinedOutput()
		require.NoError(t, err, "%s", out)
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		all.Write(b)
	}
	for _, name := range Names {
		b, err := Files.ReadFile(name)
		require.NoError(t, err)
		for _, line := range strings.Split(string(b), "\n") {
			if alert, ok := strings.CutPrefix(strings.TrimSpace(line), "- alert: "); ok {
				require.Contains(t, all.String(), "alertname: "+alert, "%s has no promtool unit test", alert)
			}
		}
	}
}
