package framework

import (
	"fmt"
	"sort"

	"go.yaml.in/yaml/v3"
)

// Args decodes a plugin's profile arguments into a typed struct. An absent
// args block decodes nothing, leaving the plugin's defaults.
type Args struct{ node *yaml.Node }

// Decode fills into from the YAML args; unknown keys are an error so a typo
// in a profile is caught at load.
func (a Args) Decode(into any) error {
	if a.node == nil || a.node.Kind == 0 {
		return nil
	}
	b, err := yaml.Marshal(a.node)
	if err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytesReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(into); err != nil {
		return fmt.Errorf("args: %w", err)
	}
	return nil
}

// ArgsFromYAML builds Args from YAML text (tests, programmatic profiles).
func ArgsFromYAML(text string) (Args, error) {
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(text), &n); err != nil {
		return Args{}, err
	}
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		return Args{node: n.Content[0]}, nil
	}
	return Args{node: &n}, nil
}

// Factory builds a plugin from its validated args.
type Factory func(args Args, h Handle) (Plugin, error)

// Registry maps plugin names to factories; it refuses duplicates.
type Registry map[string]Factory

// Register adds a factory; a second registration of a name is an error.
func (r Registry) Register(name string, f Factory) error {
	if _, ok := r[name]; ok {
		return fmt.Errorf("plugin %q is already registered", name)
	}
	if f == nil {
		return fmt.Errorf("plugin %q: nil factory", name)
	}
	r[name] = f
	return nil
}

// Merge adds every entry of o, refusing duplicates.
func (r Registry) Merge(o Registry) error {
	for name, f := range o {
		if err := r.Register(name, f); err != nil {
			return err
		}
	}
	return nil
}

// Names lists registered plugins, sorted.
func (r Registry) Names() []string {
	out := make([]string, 0, len(r))
	for n := range r {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
