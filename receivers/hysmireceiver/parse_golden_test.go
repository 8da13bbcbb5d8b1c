package hysmireceiver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heteroflow/heteroflow/receivers/smi/smitest"
	"github.com/stretchr/testify/require"
)

// TestGolden parses every fixture testdata/<form>-<what>.txt, checks that
// the form is detected from the content alone, and compares the inventory
// with testdata/<form>-<what>.golden.json (UPDATE_GOLDEN=1 rewrites).
func TestGolden(t *testing.T) {
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
			require.Equal(t, form, Detect(data), "detected form")
			snap, err := Parse(data)
			require.NoError(t, err)
			require.NotEmpty(t, snap.Devices)
			smitest.Golden(t, name, snap)
		})
	}
}

// TestRejectsForeignInput: other tools' output and garbage give a readable
// error, never a snapshot.
func TestRejectsForeignInput(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"", "   \n", "hello world\n", "{\"x\": 1}", "<html></html>"} {
		_, err := Parse([]byte(in))
		require.Error(t, err, "input %q", in)
	}
}
