// Package agenttest helps tests that run a real agent.
package agenttest

import (
	"os"
	"path/filepath"
	"testing"
)

// DataDir returns a temporary folder for an agent's data that other
// accounts can traverse (0711) but not list, as /var/lib is in a real
// install: tasks, which run as an unprivileged account under a root agent,
// reach their working directories inside.
func DataDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o711); err != nil {
			t.Fatalf("agenttest: %v", err)
		}
	}
	return dir
}
