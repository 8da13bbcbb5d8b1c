package server

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"
)

// RetentionConfig bounds the history the store keeps: the audit log, task
// logs and task events (age and size; 0 = no bound of that kind). The
// leader prunes every Interval; what a running task or an open alert
// still needs is never removed. Defaults live in Defaults.
type RetentionConfig struct {
	Interval         Duration `yaml:"interval"`
	AuditMaxAge      Duration `yaml:"audit_max_age"`
	AuditMaxRows     int64    `yaml:"audit_max_rows"`
	TaskLogMaxAge    Duration `yaml:"task_log_max_age"`
	TaskLogMaxBytes  int64    `yaml:"task_log_max_bytes"`
	TaskEventMaxAge  Duration `yaml:"task_event_max_age"`
	TaskEventMaxRows int64    `yaml:"task_event_max_rows"`
}

// Lower limits: below these a typo would wipe history an operator meant
// to keep (an age of "1m" instead of "1h", a size of 100 instead of 100M).
const (
	minRetentionAge   = time.Hour
	minRetentionRows  = 1000
	minRetentionBytes = 1 << 20
)

func (r RetentionConfig) validate() []error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if r.Interval < Duration(time.Minute) || r.Interval > Duration(24*time.Hour) {
		bad("retention.interval %s must be between 1m and 24h", time.Duration(r.Interval))
	}
	for _, a := range []struct {
		name string
		v    Duration
	}{{"audit_max_age", r.AuditMaxAge}, {"task_log_max_age", r.TaskLogMaxAge}, {"task_event_max_age", r.TaskEventMaxAge}} {
		if a.v != 0 && a.v < Duration(minRetentionAge) {
			bad("retention.%s %s must be 0 (keep forever) or at least %s", a.name, time.Duration(a.v), minRetentionAge)
		}
	}
	for _, s := range []struct {
		name     string
		v, floor int64
	}{{"audit_max_rows", r.AuditMaxRows, minRetentionRows}, {"task_event_max_rows", r.TaskEventMaxRows, minRetentionRows},
		{"task_log_max_bytes", r.TaskLogMaxBytes, minRetentionBytes}} {
		if s.v != 0 && s.v < s.floor {
			bad("retention.%s %d must be 0 (no bound) or at least %d", s.name, s.v, s.floor)
		}
	}
	return errs
}

// Retention flag names of `heteroflow server`.
const (
	FlagRetentionAuditAge      = "retention-audit-age"
	FlagRetentionAuditRows     = "retention-audit-rows"
	FlagRetentionTaskLogAge    = "retention-task-log-age"
	FlagRetentionTaskLogBytes  = "retention-task-log-bytes"
	FlagRetentionTaskEventAge  = "retention-task-event-age"
	FlagRetentionTaskEventRows = "retention-task-event-rows"
)

func registerRetentionFlags(fs *pflag.FlagSet, d RetentionConfig) {
	fs.Duration(FlagRetentionAuditAge, time.Duration(d.AuditMaxAge), "keep audit entries this long, 0 = forever / 审计日志保留时长(0 为永久)")
	fs.Int64(FlagRetentionAuditRows, d.AuditMaxRows, "keep at most this many audit entries, 0 = no bound / 审计日志最多保留条数(0 为不限)")
	fs.Duration(FlagRetentionTaskLogAge, time.Duration(d.TaskLogMaxAge), "keep logs of finished tasks this long, 0 = forever / 已结束任务日志保留时长")
	fs.Int64(FlagRetentionTaskLogBytes, d.TaskLogMaxBytes, "keep at most this many bytes of task logs, 0 = no bound / 任务日志最多保留字节数")
	fs.Duration(FlagRetentionTaskEventAge, time.Duration(d.TaskEventMaxAge), "keep events of finished tasks this long, 0 = forever / 已结束任务事件保留时长")
	fs.Int64(FlagRetentionTaskEventRows, d.TaskEventMaxRows, "keep at most this many task events, 0 = no bound / 任务事件最多保留条数")
}

func applyRetentionFlags(fs *pflag.FlagSet, r *RetentionConfig) error {
	var err error
	dur := func(name string, dst *Duration) {
		if fs.Changed(name) && err == nil {
			var v time.Duration
			v, err = fs.GetDuration(name)
			*dst = Duration(v)
		}
	}
	num := func(name string, dst *int64) {
		if fs.Changed(name) && err == nil {
			*dst, err = fs.GetInt64(name)
		}
	}
	dur(FlagRetentionAuditAge, &r.AuditMaxAge)
	num(FlagRetentionAuditRows, &r.AuditMaxRows)
	dur(FlagRetentionTaskLogAge, &r.TaskLogMaxAge)
	num(FlagRetentionTaskLogBytes, &r.TaskLogMaxBytes)
	dur(FlagRetentionTaskEventAge, &r.TaskEventMaxAge)
	num(FlagRetentionTaskEventRows, &r.TaskEventMaxRows)
	return err
}
