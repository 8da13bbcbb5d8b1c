package server

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"
)

func TestDefragPolicyConfig(t *testing.T) {
	d := Defaults().Scheduling.Defrag
	require.Equal(t, 0.5, d.Threshold)
	require.Equal(t, 30, d.MaxMovesPerHour)
	require.Equal(t, Duration(time.Minute), d.Interval)

	path := filepath.Join(t.TempDir(), "hf.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`scheduling:
  allow_defrag: true
  defrag:
    threshold: 0.3
    max_moves_per_hour: 4
    quiet_hours: ["09:00-18:00"]
    time_zone: Asia/Shanghai
    interval: 30s
`), 0o600))
	c, err := Load(path, func(string) string { return "" })
	require.NoError(t, err)
	require.Equal(t, DefragConfig{Threshold: 0.3, MaxMovesPerHour: 4, QuietHours: []string{"09:00-18:00"}, TimeZone: "Asia/Shanghai",
		Interval: Duration(30 * time.Second)}, c.Scheduling.Defrag)

	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	RegisterFlags(fs)
	require.NoError(t, fs.Parse([]string{"--defrag-threshold", "0.6", "--defrag-quiet-hours", "22:00-06:00", "--defrag-quiet-hours", "12:00-13:00",
		"--defrag-max-moves-per-hour", "0", "--defrag-interval", "2m"}))
	require.NoError(t, ApplyFlags(fs, &c))
	require.Equal(t, DefragConfig{Threshold: 0.6, MaxMovesPerHour: 0, QuietHours: []string{"22:00-06:00", "12:00-13:00"},
		TimeZone: "Asia/Shanghai", Interval: Duration(2 * time.Minute)}, c.Scheduling.Defrag)

	for _, tc := range []struct {
		mod func(*DefragConfig)
		msg string
	}{
		{func(d *DefragConfig) { d.Threshold = 1.2 }, "scheduling.defrag.threshold"},
		{func(d *DefragConfig) { d.MaxMovesPerHour = -1 }, "scheduling.defrag.max_moves_per_hour"},
		{func(d *DefragConfig) { d.Interval = 0 }, "scheduling.defrag.interval"},
		{func(d *DefragConfig) { d.TimeZone = "Mars/Olympus" }, "scheduling.defrag.time_zone"},
		{func(d *DefragConfig) { d.QuietHours = []string{"0900"} }, "scheduling.defrag.quiet_hours"},
	} {
		c := Defaults()
		tc.mod(&c.Scheduling.Defrag)
		err := c.Validate()
		require.Error(t, err, tc.msg)
		require.Contains(t, err.Error(), tc.msg)
	}
}
