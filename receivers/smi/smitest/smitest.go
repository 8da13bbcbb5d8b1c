// Package smitest is the test harness shared by the vendor parser packages:
// golden inventory JSON files under testdata/ (rewritten only when
// UPDATE_GOLDEN=1) and access to the shared real-output samples, which tests
// skip when the directory is absent.
package smitest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/heteroflow/heteroflow/receivers/inventory"
	"github.com/stretchr/testify/require"
)

// SamplesEnv overrides where the shared real-output samples live.
const SamplesEnv = "HETEROFLOW_SMI_SAMPLES"

// defaultSamples is where the project keeps the shared sample tree beside
// the repository checkout.
const defaultSamples = "/work/shared/smi-samples"

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
	dir := os.Getenv(SamplesEnv)
	if dir == "" {
		dir = defaultSamples
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
		dir = defaultSamples
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
