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
