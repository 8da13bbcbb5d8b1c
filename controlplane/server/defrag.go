package server

import (
	"fmt"
	"strings"
	"time"
	_ "time/tzdata" // quiet hours name IANA zones; servers in slim images have no zoneinfo

	"github.com/spf13/pflag"
)

// DefragConfig is the leader's automatic defragmentation policy; it acts
// only with allow_defrag. Every interval the leader plans moves of
// restartable Bronze tasks that free whole devices and executes them when
// the fragmentation score is at least threshold, outside the quiet hours
// and within max_moves_per_hour.
type DefragConfig struct {
	// Threshold: fragmentation score (share of free device compute on
	// partly used devices, 0..1) from which moves start; 0 = no automatic
	// runs (POST /api/v1/scheduler/defrag still executes a plan by hand).
	Threshold float64 `yaml:"threshold"`
	// MaxMovesPerHour bounds the tasks moved in any sliding hour (0 = no limit).
	MaxMovesPerHour int `yaml:"max_moves_per_hour"`
	// QuietHours are daily "HH:MM-HH:MM" windows without automatic moves
	// ("22:00-06:00" wraps past midnight).
	QuietHours []string `yaml:"quiet_hours,omitempty"`
	// TimeZone of the quiet hours (IANA name; empty = UTC).
	TimeZone string `yaml:"time_zone"`
	// Interval between the leader's checks.
	Interval Duration `yaml:"interval"`
}

func defaultDefrag() DefragConfig {
	return DefragConfig{Threshold: 0.5, MaxMovesPerHour: 30, Interval: Duration(time.Minute)}
}

// Flag names of the defragmentation policy.
const (
	FlagDefragThreshold  = "defrag-threshold"
	FlagDefragMaxPerHour = "defrag-max-moves-per-hour"
	FlagDefragQuietHours = "defrag-quiet-hours"
	FlagDefragTimeZone   = "defrag-time-zone"
	FlagDefragInterval   = "defrag-interval"
)

func registerDefragFlags(fs *pflag.FlagSet, d DefragConfig) {
	fs.Float64(FlagDefragThreshold, d.Threshold, "with --allow-defrag: fragmentation score (0..1) from which the leader moves tasks, 0 = manual only / 自动碎片整理的碎片率阈值(0..1)，0 为仅手动")
	fs.Int(FlagDefragMaxPerHour, d.MaxMovesPerHour, "most tasks moved by defragmentation in any hour, 0 = no limit / 每小时最多迁移任务数，0 为不限")
	fs.StringSlice(FlagDefragQuietHours, d.QuietHours, "daily windows without automatic moves, e.g. 09:00-18:00 (repeatable) / 不自动迁移的每日时段，如 09:00-18:00(可重复)")
	fs.String(FlagDefragTimeZone, d.TimeZone, "time zone of the quiet hours (IANA, empty = UTC) / 静默时段的时区(IANA，空为 UTC)")
	fs.Duration(FlagDefragInterval, time.Duration(d.Interval), "how often the leader checks the defragmentation policy / 检查碎片整理策略的间隔")
}

func applyDefragFlags(fs *pflag.FlagSet, c *DefragConfig) error {
	var err error
	if fs.Changed(FlagDefragThreshold) {
		if c.Threshold, err = fs.GetFloat64(FlagDefragThreshold); err != nil {
			return err
		}
	}
	if fs.Changed(FlagDefragMaxPerHour) {
		if c.MaxMovesPerHour, err = fs.GetInt(FlagDefragMaxPerHour); err != nil {
			return err
		}
	}
	if fs.Changed(FlagDefragQuietHours) {
		if c.QuietHours, err = fs.GetStringSlice(FlagDefragQuietHours); err != nil {
			return err
		}
	}
	if fs.Changed(FlagDefragTimeZone) {
		if c.TimeZone, err = fs.GetString(FlagDefragTimeZone); err != nil {
			return err
		}
	}
	if fs.Changed(FlagDefragInterval) {
		var d time.Duration
		if d, err = fs.GetDuration(FlagDefragInterval); err != nil {
			return err
		}
		c.Interval = Duration(d)
	}
	return nil
}

// validate reports what is wrong with the policy; the quiet hours' syntax
// is checked where they are parsed (scheduling.ParseQuietWindow), this
// checks ranges and the time zone.
func (c DefragConfig) validate() []string {
	var bad []string
	if c.Threshold < 0 || c.Threshold > 1 {
		bad = append(bad, fmt.Sprintf("scheduling.defrag.threshold %g must be between 0 and 1", c.Threshold))
	}
	if c.MaxMovesPerHour < 0 {
		bad = append(bad, "scheduling.defrag.max_moves_per_hour must not be negative")
	}
	if c.Interval < Duration(time.Second) || c.Interval > Duration(24*time.Hour) {
		bad = append(bad, fmt.Sprintf("scheduling.defrag.interval %s must be between 1s and 24h", time.Duration(c.Interval)))
	}
	if c.TimeZone != "" {
		if _, err := time.LoadLocation(c.TimeZone); err != nil {
			bad = append(bad, fmt.Sprintf("scheduling.defrag.time_zone %q is not a known time zone", c.TimeZone))
		}
	}
	for _, w := range c.QuietHours {
		if !strings.Contains(w, "-") {
			bad = append(bad, fmt.Sprintf("scheduling.defrag.quiet_hours %q must be HH:MM-HH:MM", w))
		}
	}
	return bad
}
