package collector

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// simulatedCLIs writes shell scripts standing in for nvidia-smi and npu-smi:
// each prints its testdata capture for the primary command and fails the
// secondary ones (topo -m, info -m), which the receivers report as partial
// scrape errors. They return the scripts' absolute paths for tool_path.
func simulatedCLIs(t *testing.T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	tools := map[string]struct{ tool, args, fixture string }{
		"nvidia": {"nvidia-smi", "-q -x", "nvidia-smi-q-x.xml"},
		"ascend": {"npu-smi", "info", "npu-smi-info.txt"},
	}
	paths := map[string]string{}
	for vendor, tl := range tools {
		fixture, err := filepath.Abs(filepath.Join("testdata", tl.fixture))
		require.NoError(t, err)
		script := fmt.Sprintf("#!/bin/sh\nif [ \"$*\" = %q ]; then exec cat %q; fi\necho \"unsupported: $*\" >&2\nexit 2\n",
			tl.args, fixture)
		path := filepath.Join(dir, tl.tool)
		require.NoError(t, os.WriteFile(path, []byte(script), 0o755))
		paths[vendor] = path
	}
	return paths
}
