package credentials

import (
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestSaveLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, err := Load(dir)
	require.ErrorIs(t, err, ErrNotEnrolled)
	c := Credentials{Server: "http://s:3333", NodeID: "node-1", APIKey: "hf_abc_def", EnrolledAt: time.Unix(1, 0).UTC()}
	require.NoError(t, Save(dir, c))
	st, err := os.Stat(Path(dir))
	require.NoError(t, err)
	if runtime.GOOS != "windows" {
		require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	}
	got, err := Load(dir)
	require.NoError(t, err)
	require.Equal(t, c, got)
	require.Error(t, Save(dir, Credentials{NodeID: "x"}))
}

func TestLoadRefusesOpenPermissions(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("POSIX modes")
	}
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, Save(dir, Credentials{NodeID: "n", APIKey: "k"}))
	require.NoError(t, os.Chmod(Path(dir), 0o644))
	_, err := Load(dir)
	require.ErrorContains(t, err, "must be 0600")
}
