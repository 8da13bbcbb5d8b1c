package app

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane/scheduling"
	"github.com/heteroflow/heteroflow/controlplane/server"
)

func TestSchedulingConfig(t *testing.T) {
	t.Run("preempt mode reaches the Preempt plugin's args", func(t *testing.T) {
		c, err := schedulingConfig(server.SchedulingConfig{PreemptMode: "queue-only", AllowDefrag: true,
			BronzeOvercommit: 1.5, QueueTimeout: server.Duration(time.Hour)})
		require.NoError(t, err)
		require.True(t, c.AllowDefrag)
		require.Equal(t, 1.5, c.BronzeOvercommit)
		require.Equal(t, time.Hour, c.QueueTimeout)
		found := false
		for _, p := range c.Profile.Plugins {
			if p.Name == "Preempt" {
				var args struct{ Mode string }
				require.NoError(t, p.Args.Decode(&args))
				require.Equal(t, "queue-only", args.Mode)
				found = true
			}
		}
		require.True(t, found)
	})
	t.Run("defrag policy reaches the scheduler", func(t *testing.T) {
		c, err := schedulingConfig(server.SchedulingConfig{AllowDefrag: true, Defrag: server.DefragConfig{Threshold: 0.4,
			MaxMovesPerHour: 6, QuietHours: []string{"22:00-06:00"}, TimeZone: "Asia/Shanghai", Interval: server.Duration(time.Minute)}})
		require.NoError(t, err)
		require.Equal(t, 0.4, c.Defrag.Threshold)
		require.Equal(t, 6, c.Defrag.MaxMovesPerHour)
		require.Equal(t, []scheduling.QuietWindow{{Start: 22 * 60, End: 6 * 60}}, c.Defrag.QuietHours)
		require.Equal(t, "Asia/Shanghai", c.Defrag.Location.String())
		_, err = schedulingConfig(server.SchedulingConfig{Defrag: server.DefragConfig{QuietHours: []string{"22:00-22:00"}}})
		require.ErrorContains(t, err, "scheduling.defrag.quiet_hours")
	})
	t.Run("missing profile file is a clear error", func(t *testing.T) {
		_, err := schedulingConfig(server.SchedulingConfig{Profile: "/nonexistent/profile.yaml"})
		require.ErrorContains(t, err, "scheduling.profile")
	})
}
