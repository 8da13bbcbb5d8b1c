package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A missing or invalid collector config stops with the file named and the
// reason in both languages.
func TestCollectorConfigErrorsAreBilingual(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.yaml")
	r := cli(t, nil, "", "collector", "--config", missing)
	require.Equal(t, 1, r.code, "%+v", r)
	require.Contains(t, r.stderr, missing)
	require.Contains(t, r.stderr, "无法读取采集器配置文件")

	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("receivers: {nope: {}}\nservice: {pipelines: {metrics: {receivers: [nope], exporters: [debug]}}}\n"), 0o600))
	r = cli(t, nil, "", "collector", "--config", bad, "--validate")
	require.Equal(t, 1, r.code, "%+v", r)
	require.Contains(t, r.stderr, "nope")
	require.Contains(t, r.stderr, "采集器配置无效")
}
