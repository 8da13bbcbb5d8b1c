package server

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"
)

// TestHubConfig: `hub: true`, the mapping, HETEROFLOW_HUB and --hub all
// turn the hub on; a typo'd key and a bad interval are refused.
func TestHubConfig(t *testing.T) {
	t.Parallel()
	load := func(yml string, env map[string]string) (Config, error) {
		p := filepath.Join(t.TempDir(), "c.yaml")
		require.NoError(t, os.WriteFile(p, []byte(yml), 0o600))
		return Load(p, func(k string) string { return env[k] })
	}
	c, err := load("hub: true\n", nil)
	require.NoError(t, err)
	require.True(t, c.Hub.Enabled)
	require.Equal(t, Duration(10*time.Second), c.Hub.PollInterval, "defaults kept")
	c, err = load("hub:\n  enabled: true\n  poll_interval: 30s\n", nil)
	require.NoError(t, err)
	require.True(t, c.Hub.Enabled)
	require.Equal(t, Duration(30*time.Second), c.Hub.PollInterval)
	require.Equal(t, Duration(10*time.Second), c.Hub.Timeout)
	_, err = load("hub:\n  enabld: true\n", nil)
	require.ErrorContains(t, err, "enabld")
	c, err = load("", map[string]string{EnvHub: "true"})
	require.NoError(t, err)
	require.True(t, c.Hub.Enabled)
	c, err = load("hub:\n  poll_interval: 10ms\n", nil)
	require.NoError(t, err)
	require.ErrorContains(t, c.Validate(), "hub.poll_interval")

	fs := pflag.NewFlagSet("server", pflag.ContinueOnError)
	RegisterFlags(fs)
	require.NoError(t, fs.Parse([]string{"--hub"}))
	c = Defaults()
	require.NoError(t, ApplyFlags(fs, &c))
	require.True(t, c.Hub.Enabled)
}

// TestSealerKeyFile: without HA the hub's sealing key is created once in
// the data directory (0600) and opens what it sealed after a restart;
// another key does not.
func TestSealerKeyFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := &Server{cfg: Config{DataDir: dir}}
	sl, err := s.Sealer()
	require.NoError(t, err)
	sealed := sl.Seal("cluster.api_key/east", []byte("hf_secret"))
	require.NotContains(t, sealed, "hf_secret")
	st, err := os.Stat(filepath.Join(dir, hubKeyFile))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())

	again, err := (&Server{cfg: Config{DataDir: dir}}).Sealer()
	require.NoError(t, err)
	plain, err := again.Open("cluster.api_key/east", sealed)
	require.NoError(t, err)
	require.Equal(t, "hf_secret", string(plain))
	_, err = again.Open("cluster.api_key/west", sealed)
	require.Error(t, err, "bound to its name")
	other, err := (&Server{cfg: Config{DataDir: t.TempDir()}}).Sealer()
	require.NoError(t, err)
	_, err = other.Open("cluster.api_key/east", sealed)
	require.Error(t, err, "another key does not open it")
}
