package sim

import (
	"os"
	"path/filepath"
)

// traceDir is ../shared/trace/ beside the repository checkout (found by
// walking up to go.mod), or $HETEROFLOW_TRACE_DIR; tests skip when the
// files are not there.
func traceDir() string {
	if d := os.Getenv("HETEROFLOW_TRACE_DIR"); d != "" {
		return d + string(filepath.Separator)
	}
	dir, _ := os.Getwd()
	for dir != filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "..", "shared", "trace") + string(filepath.Separator)
		}
		dir = filepath.Dir(dir)
	}
	return ""
}
