package server

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// The TSDB lives under data_dir unless metrics.dir says otherwise, so two
// servers with different data dirs never share (and lock) one TSDB.
func TestMetricsDirFollowsDataDir(t *testing.T) {
	c := Defaults()
	c.DataDir = "/var/lib/heteroflow"
	require.Equal(t, filepath.Join("/var/lib/heteroflow", "metrics"), c.metricsConfig().Dir)
	c.Metrics.Dir = "/fast/tsdb"
	require.Equal(t, "/fast/tsdb", c.metricsConfig().Dir)
}
