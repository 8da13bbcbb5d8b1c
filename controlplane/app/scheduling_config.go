package app

import (
	"fmt"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/heteroflow/heteroflow/controlplane/scheduling"
	"github.com/heteroflow/heteroflow/controlplane/server"
	"github.com/heteroflow/heteroflow/scheduler/framework"
)

// schedulingConfig turns the operator's scheduling section into the live
// scheduler's Config: the profile (file or built-in), the preemption mode
// written into the Preempt plugin's args, defragmentation, overcommit and
// the queue timeout.
func schedulingConfig(c server.SchedulingConfig) (scheduling.Config, error) {
	out := scheduling.Defaults()
	if c.Profile != "" {
		p, err := framework.LoadProfileFile(c.Profile)
		if err != nil {
			return out, fmt.Errorf("scheduling.profile: %w", err)
		}
		out.Profile = p
	}
	if c.PreemptMode != "" {
		if err := setPreemptMode(&out.Profile, c.PreemptMode); err != nil {
			return out, err
		}
	}
	out.AllowDefrag = c.AllowDefrag
	pol, err := defragPolicy(c.Defrag)
	if err != nil {
		return out, err
	}
	out.Defrag = pol
	if c.BronzeOvercommit != 0 {
		out.BronzeOvercommit = c.BronzeOvercommit
	}
	out.QueueTimeout = time.Duration(c.QueueTimeout)
	return out, nil
}

// setPreemptMode sets args.mode of the profile's Preempt plugin.
func setPreemptMode(p *framework.Profile, mode string) error {
	for i := range p.Plugins {
		if p.Plugins[i].Name != "Preempt" {
			continue
		}
		var node yaml.Node
		if err := node.Encode(map[string]string{"mode": mode}); err != nil {
			return err
		}
		p.Plugins[i].Args = node
		return p.Validate()
	}
	return fmt.Errorf("scheduling.preempt_mode %q: the profile %q has no Preempt plugin", mode, p.Name)
}

// defragPolicy turns the configured policy into the scheduler's.
func defragPolicy(c server.DefragConfig) (scheduling.DefragPolicy, error) {
	p := scheduling.DefragPolicy{Threshold: c.Threshold, MaxMovesPerHour: c.MaxMovesPerHour, Interval: time.Duration(c.Interval)}
	for _, w := range c.QuietHours {
		q, err := scheduling.ParseQuietWindow(w)
		if err != nil {
			return p, fmt.Errorf("scheduling.defrag.quiet_hours: %w", err)
		}
		p.QuietHours = append(p.QuietHours, q)
	}
	if c.TimeZone != "" {
		loc, err := time.LoadLocation(c.TimeZone)
		if err != nil {
			return p, fmt.Errorf("scheduling.defrag.time_zone: %w", err)
		}
		p.Location = loc
	}
	return p, nil
}
