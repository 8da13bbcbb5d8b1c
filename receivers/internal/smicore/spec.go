package smicore

import "github.com/heteroflow/heteroflow/receivers/inventory"

// Command is one invocation of a vendor tool and the form it prints.
type Command struct {
	Args []string
	Form string
	// Secondary commands add detail (topology, chip map); their failure is a
	// warning, never a failed collection.
	Secondary bool
	// Apply folds a secondary command's output into the snapshot when plain
	// ParseForm + Merge does not fit (Ascend's chip map re-keys devices).
	Apply func(snap *inventory.Snapshot, out []byte) error
}

// Tool is one binary name (or absolute path) and the commands that make a
// full snapshot with it. The first command is the primary one.
type Tool struct {
	Name     string
	Commands []Command
}

// Spec is everything Collect needs to know about one vendor. Each vendor
// package provides its own (SMISpec).
type Spec struct {
	Vendor string
	// Tools are tried in order; the first one that exists is used.
	Tools []Tool
	// Forms, Detect and ParseForm come from the vendor's parser package.
	Forms     []string
	Detect    func([]byte) string
	ParseForm func(form string, data []byte) (*inventory.Snapshot, error)
	// Parse auto-detects; its error names the forms it expected.
	Parse func([]byte) (*inventory.Snapshot, error)
}

// ToolNames lists the binary names this vendor answers to.
func (s Spec) ToolNames() []string {
	out := make([]string, 0, len(s.Tools))
	for _, t := range s.Tools {
		out = append(out, t.Name)
	}
	return out
}

// One is shorthand for a Tool with its commands.
func One(name string, cmds ...Command) Tool { return Tool{Name: name, Commands: cmds} }
