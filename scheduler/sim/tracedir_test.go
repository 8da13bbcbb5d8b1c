package sim

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/scheduler/model"
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

// fullOpenb is the setup of the long openb replays: it skips unless
// HETEROFLOW_OPENB_FULL is set, and returns the trace folder, the openb
// cluster and the paper's seeds 42–51.
func fullOpenb(t *testing.T) (string, []model.Node, []uint64) {
	t.Helper()
	if os.Getenv("HETEROFLOW_OPENB_FULL") == "" || testing.Short() {
		t.Skip("set HETEROFLOW_OPENB_FULL=1 to replay the openb traces × 10 seeds")
	}
	dir := traceDir()
	nodes, err := LoadNodes(dir + "openb_node_list_gpu_node.csv")
	require.NoError(t, err)
	seeds, err := ParseSeeds("42-51")
	require.NoError(t, err)
	return dir, nodes, seeds
}
