// Package smitest is the test harness shared by the vendor parser packages:
// golden inventory JSON files under testdata/ (rewritten only when
// UPDATE_GOLDEN=1) and access to the shared real-output samples, which tests
// skip when the directory is absent.
package smitest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heteroflow/heteroflow/receivers/inventory"
	"github.com/stretchr/testify/require"
)

// SamplesEnv overrides where the shared real-output samples live.
const SamplesEnv = "HETEROFLOW_SMI_SAMPLES"

// samplesDefault is ../shared/smi-samples beside the repository checkout
// (found by walking up from the test's directory to go.mod), where the
// project and CI keep the shared real-output samples.
func samplesDefault() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "..", "shared", "smi-samples")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// Marshal renders a snapshot the way goldens and `heteroflow smi parse`
// show it: indented JSON with a trailing newline.
func Marshal(t testing.TB, snap *inventory.Snapshot) []byte {
	t.Helper()
	b, err := json.MarshalIndent(snap, "", "  ")
	require.NoError(t, err)
	return append(b, '\n')
}

// Golden compares snap with testdata/<name>.golden.json; UPDATE_GOLDEN=1
// rewrites the file instead.
func Golden(t testing.TB, name string, snap *inventory.Snapshot) {
	t.Helper()
	got := Marshal(t, snap)
	path := filepath.Join("testdata", name+".golden.json")
	if os.Getenv("UPDATE_GOLDEN") == "1" {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file; run with UPDATE_GOLDEN=1 to create it")
	require.JSONEq(t, string(want), string(got))
}

// Fixture reads testdata/<name>.
func Fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return b
}

// Sample reads <samples>/<rel>, skipping the test when the sample tree is
// not present on this machine.
func Sample(t testing.TB, rel string) []byte {
	t.Helper()
	dir := SamplesDir()
	if dir == "" {
		t.Skipf("sample tree not present (set %s)", SamplesEnv)
	}
	b, err := os.ReadFile(filepath.Join(dir, rel))
	if os.IsNotExist(err) {
		t.Skipf("sample %s not present (set %s)", rel, SamplesEnv)
	}
	require.NoError(t, err)
	return b
}

// SamplesDir returns the sample tree's path, or "" when it is absent.
func SamplesDir() string {
	dir := os.Getenv(SamplesEnv)
	if dir == "" {
		dir = samplesDefault()
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return ""
	}
	return dir
}

// TotalMemory sums known MemoryTotalMiB over the devices.
func TotalMemory(s *inventory.Snapshot) int64 {
	var sum int64
	for _, d := range s.Devices {
		if d.MemoryTotalMiB != nil {
			sum += *d.MemoryTotalMiB
		}
	}
	return sum
}

// RunGolden parses every fixture testdata/<form>-<what>.txt with parse,
// checks that detect finds the form from the content alone, and compares
// the inventory with testdata/<form>-<what>.golden.json (UPDATE_GOLDEN=1
// rewrites). Every vendor parser package runs it.
func RunGolden(t *testing.T, detect func([]byte) string, parse func([]byte) (*inventory.Snapshot, error)) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "*.txt"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), ".txt")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			form, _, _ := strings.Cut(name, "-")
			require.Equal(t, form, detect(data), "detected form")
			snap, err := parse(data)
			require.NoError(t, err)
			require.NotEmpty(t, snap.Devices)
			Golden(t, name, snap)
		})
	}
}

// RejectsForeignInput checks that other tools' output and garbage give a
// readable error, never a snapshot.
func RejectsForeignInput(t *testing.T, parse func([]byte) (*inventory.Snapshot, error)) {
	t.Parallel()
	for _, in := range []string{"", "   \n", "hello world\n", "{\"x\": 1}", "<html></html>"} {
		_, err := parse([]byte(in))
		require.Error(t, err, "input %q", in)
	}
}
