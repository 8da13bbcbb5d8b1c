package framework

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"go.yaml.in/yaml/v3"
)

// PluginConfig is one plugin entry of a profile.
type PluginConfig struct {
	Name    string    `yaml:"name"`
	Weight  *float64  `yaml:"weight,omitempty"`  // score weight; absent means 1, 0 silences the score
	Enabled *bool     `yaml:"enabled,omitempty"` // default true
	Args    yaml.Node `yaml:"args,omitempty"`
}

// Profile says which plugins run, with which weights and args.
type Profile struct {
	Name string `yaml:"name"`
	// Assign names the plugin that picks devices (it must be listed).
	Assign string `yaml:"assign"`
	// TieBreak among equal best scores: "first" (lowest node index, the
	// deterministic default) or "random" (kube-scheduler's reservoir pick).
	TieBreak string         `yaml:"tieBreak,omitempty"`
	Plugins  []PluginConfig `yaml:"plugins"`
}

// Tie-break rules.
const (
	TieFirst  = "first"
	TieRandom = "random"
)

// LoadProfile reads a profile from YAML and validates it.
func LoadProfile(r io.Reader) (Profile, error) {
	var p Profile
	dec := yaml.NewDecoder(r)
	dec.KnownFields(true)
	if err := dec.Decode(&p); err != nil {
		return Profile{}, fmt.Errorf("profile: %w", err)
	}
	if err := p.Validate(); err != nil {
		return Profile{}, err
	}
	return p, nil
}

// LoadProfileFile reads a profile file.
func LoadProfileFile(path string) (Profile, error) {
	f, err := os.Open(path)
	if err != nil {
		return Profile{}, fmt.Errorf("profile: %w", err)
	}
	defer f.Close()
	p, err := LoadProfile(f)
	if err != nil {
		return Profile{}, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// Validate checks names, weights and the tie rule (not plugin existence:
// that needs the registry, checked by New).
func (p *Profile) Validate() error {
	if p.Name == "" {
		return fmt.Errorf("profile: name is required")
	}
	if p.TieBreak == "" {
		p.TieBreak = TieFirst
	}
	if p.TieBreak != TieFirst && p.TieBreak != TieRandom {
		return fmt.Errorf("profile %s: tieBreak must be %q or %q", p.Name, TieFirst, TieRandom)
	}
	seen := map[string]bool{}
	assignListed := false
	for i := range p.Plugins {
		pc := &p.Plugins[i]
		if pc.Name == "" {
			return fmt.Errorf("profile %s: plugin %d has no name", p.Name, i)
		}
		if seen[pc.Name] {
			return fmt.Errorf("profile %s: plugin %s listed twice", p.Name, pc.Name)
		}
		seen[pc.Name] = true
		if pc.Weight != nil && (*pc.Weight < 0 || *pc.Weight > 1e6) {
			return fmt.Errorf("profile %s: plugin %s weight must be between 0 and 1e6", p.Name, pc.Name)
		}
		if pc.Name == p.Assign {
			assignListed = true
		}
	}
	if !assignListed {
		return fmt.Errorf("profile %s: assign plugin %q must be one of the listed plugins", p.Name, p.Assign)
	}
	return nil
}

// Marshal renders the profile as YAML (round-trips through LoadProfile).
func (p Profile) Marshal() ([]byte, error) { return yaml.Marshal(p) }

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }
