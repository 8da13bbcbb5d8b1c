package scheduling

import (
	"fmt"
	"sort"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/scheduler/framework"
	"github.com/heteroflow/heteroflow/scheduler/plugins"
)

// effectiveProfile applies stored settings (order, weight, enabled) to the
// configured profile. Stored names the profile lacks are ignored; profile
// plugins without a stored setting keep their place after the stored ones.
func effectiveProfile(p framework.Profile, settings []controlplane.PluginSetting) framework.Profile {
	pos := map[string]int{}
	set := map[string]controlplane.PluginSetting{}
	for _, st := range settings {
		pos[st.Name], set[st.Name] = st.Position, st
	}
	out := p
	out.Plugins = append([]framework.PluginConfig(nil), p.Plugins...)
	sort.SliceStable(out.Plugins, func(i, j int) bool {
		pi, oki := pos[out.Plugins[i].Name]
		pj, okj := pos[out.Plugins[j].Name]
		switch {
		case oki && okj:
			return pi < pj
		default:
			return oki && !okj
		}
	})
	for i := range out.Plugins {
		if st, ok := set[out.Plugins[i].Name]; ok {
			w, en := st.Weight, st.Enabled
			out.Plugins[i].Weight, out.Plugins[i].Enabled = &w, &en
		}
	}
	return out
}

// registry is the live registry plus NodeReady bound to snap and the
// out-of-tree plugins in extra (checked for clashes at New).
func registry(snap *snapshot, extra framework.Registry) framework.Registry {
	r := plugins.LiveRegistry()
	for name, f := range extra {
		r[name] = f
	}
	if err := r.Register(NameNodeReady, func(args framework.Args, _ framework.Handle) (framework.Plugin, error) {
		return &nodeReady{s: snap}, args.Decode(&struct{}{})
	}); err != nil {
		panic(err)
	}
	return r
}

// buildFramework builds the profile over snap and connects the live inputs.
func (s *Service) buildFramework(snap *snapshot, settings []controlplane.PluginSetting) (*framework.Framework, error) {
	prof := effectiveProfile(s.cfg.Profile, settings)
	fw, err := framework.New(registry(snap, s.extra), prof, snap.cl, framework.Options{Logger: s.log})
	if err != nil {
		return nil, fmt.Errorf("scheduling: %w", err)
	}
	if p, ok := fw.Plugin(plugins.NameLoadAware); ok && s.sample != nil {
		p.(*plugins.LoadAware).SetSampler(s.sample)
	}
	if p, ok := fw.Plugin(plugins.NameQuota); ok {
		p.(*plugins.Quota).SetChecker(quotaChecker{s})
	}
	if p, ok := fw.Plugin(plugins.NamePreempt); ok {
		p.(*plugins.Preempt).SetVictimInfo(s.victimInfo)
	}
	if p, ok := fw.Plugin(plugins.NameAudit); ok && s.audit != nil {
		p.(*plugins.Audit).SetSink(s.auditDecision)
	}
	return fw, nil
}

// PluginState is one plugin as the API shows it.
type PluginState struct {
	Name     string   `json:"name"`
	Enabled  bool     `json:"enabled"`
	Weight   float64  `json:"weight"`
	Position int      `json:"position"`
	Points   []string `json:"extension_points"`
	Assign   bool     `json:"assign"`
}

// currentSettings is the effective list: stored settings over the profile.
func currentSettings(p framework.Profile, stored []controlplane.PluginSetting) []controlplane.PluginSetting {
	eff := effectiveProfile(p, stored)
	out := make([]controlplane.PluginSetting, len(eff.Plugins))
	for i, pc := range eff.Plugins {
		w, en := 1.0, true
		if pc.Weight != nil {
			w = *pc.Weight
		}
		if pc.Enabled != nil {
			en = *pc.Enabled
		}
		out[i] = controlplane.PluginSetting{Name: pc.Name, Enabled: en, Weight: w, Position: i}
	}
	return out
}

// applySettingsLocked makes stored settings live: weights and enable flags
// in place; a new order rebuilds the framework (order is compiled in).
func (s *Service) applySettingsLocked(stored []controlplane.PluginSetting) error {
	if s.fw == nil {
		return nil
	}
	want := currentSettings(s.cfg.Profile, stored)
	have := currentSettings(s.cfg.Profile, s.settings)
	orderChanged := false
	for i := range want {
		if want[i].Name != have[i].Name {
			orderChanged = true
		}
	}
	if orderChanged {
		if len(s.waiting) > 0 {
			return fmt.Errorf("%w: gangs are being placed; retry in a moment", controlplane.ErrConflict)
		}
		fw, err := s.buildFramework(s.snap, stored)
		if err != nil {
			return err
		}
		s.fw, s.settings = fw, stored
		return s.observeWorkloadLocked(true) // the new Fragmentation starts empty
	}
	for _, w := range want {
		if err := s.fw.SetWeight(w.Name, w.Weight); err != nil {
			return controlplane.Invalidf("%v", err)
		}
		if err := s.fw.SetEnabled(w.Name, w.Enabled); err != nil {
			return controlplane.Invalidf("%v", err)
		}
	}
	s.settings = stored
	return nil
}
