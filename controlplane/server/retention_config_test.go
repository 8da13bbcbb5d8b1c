package server

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"
)

func TestRetentionDefaultsBoundEveryKind(t *testing.T) {
	r := Defaults().Retention
	require.NotZero(t, r.Interval)
	for name, v := range map[string]int64{"audit age": int64(r.AuditMaxAge), "audit rows": r.AuditMaxRows,
		"task log age": int64(r.TaskLogMaxAge), "task log bytes": r.TaskLogMaxBytes,
		"task event age": int64(r.TaskEventMaxAge), "task event rows": r.TaskEventMaxRows} {
		require.Positive(t, v, "%s: history must not grow forever by default", name)
	}
}

func TestRetentionFromFileAndFlags(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hf.yaml")
	require.NoError(t, os.WriteFile(path, []byte("retention:\n  audit_max_age: 720h\n  task_log_max_bytes: 0\n"), 0o600))
	c, err := Load(path, func(string) string { return "" })
	require.NoError(t, err)
	require.Equal(t, Duration(720*time.Hour), c.Retention.AuditMaxAge)
	require.Zero(t, c.Retention.TaskLogMaxBytes, "0 turns the byte bound off")
	require.Equal(t, Defaults().Retention.TaskEventMaxRows, c.Retention.TaskEventMaxRows, "unset keys keep defaults")

	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	RegisterFlags(fs)
	require.NoError(t, fs.Parse([]string{"--retention-audit-age", "48h", "--retention-task-log-bytes", "2097152",
		"--retention-task-event-rows", "5000", "--retention-task-log-age", "0", "--retention-audit-rows", "2000",
		"--retention-task-event-age", "2h"}))
	require.NoError(t, ApplyFlags(fs, &c))
	require.Equal(t, RetentionConfig{Interval: Defaults().Retention.Interval, AuditMaxAge: Duration(48 * time.Hour), AuditMaxRows: 2000,
		TaskLogMaxAge: 0, TaskLogMaxBytes: 2 << 20, TaskEventMaxAge: Duration(2 * time.Hour), TaskEventMaxRows: 5000}, c.Retention)
	require.NoError(t, c.Validate())
}

func TestRetentionValidation(t *testing.T) {
	cases := []struct {
		name string
		mod  func(*RetentionConfig)
		msg  string
	}{
		{"interval too short", func(r *RetentionConfig) { r.Interval = Duration(time.Second) }, "retention.interval"},
		{"age typo", func(r *RetentionConfig) { r.AuditMaxAge = Duration(time.Minute) }, "retention.audit_max_age"},
		{"negative age", func(r *RetentionConfig) { r.TaskEventMaxAge = Duration(-time.Hour) }, "retention.task_event_max_age"},
		{"tiny log bound", func(r *RetentionConfig) { r.TaskLogMaxBytes = 100 }, "retention.task_log_max_bytes"},
		{"tiny row bound", func(r *RetentionConfig) { r.AuditMaxRows = 10 }, "retention.audit_max_rows"},
		{"negative rows", func(r *RetentionConfig) { r.TaskEventMaxRows = -1 }, "retention.task_event_max_rows"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := Defaults()
			tc.mod(&c.Retention)
			err := c.Validate()
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.msg)
		})
	}
	c := Defaults()
	c.Retention.AuditMaxAge, c.Retention.TaskLogMaxBytes = 0, 0
	require.NoError(t, c.Validate(), "0 keeps a kind forever")
}
