package smicore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// Collect takes one full snapshot of spec's devices: it finds the first
// installed tool, runs its primary command, parses it, then runs the
// secondary commands and merges what they add. Errors: ErrToolNotFound (no
// tool, or another vendor's tool of that name), ErrDriverNotLoaded (the tool
// fails or prints no devices), or a parse error for output the parser
// cannot read.
func Collect(ctx context.Context, spec Spec, run Runner) (*inventory.Snapshot, error) {
	var notFound []string
	for _, tool := range spec.Tools {
		primary := tool.Commands[0]
		out, err := run(ctx, tool.Name, primary.Args...)
		if errors.Is(err, ErrToolNotFound) {
			notFound = append(notFound, tool.Name)
			continue
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrDriverNotLoaded, err)
		}
		snap, err := spec.ParseForm(primary.Form, out)
		if errors.Is(err, ErrForeignTool) {
			notFound = append(notFound, fmt.Sprintf("%s (%v)", tool.Name, err))
			continue
		}
		if err != nil && snap == nil {
			return nil, fmt.Errorf("%s %s: %w", tool.Name, strings.Join(primary.Args, " "), err)
		}
		if len(snap.Devices) == 0 {
			return nil, fmt.Errorf("%w: %s lists no devices", ErrDriverNotLoaded, tool.Name)
		}
		if snap.Vendor != "" && snap.Vendor != spec.Vendor {
			// Hygon DTK ships a rocm-smi too; its devices belong to hygon.
			return nil, fmt.Errorf("%w: %s is the %s build", ErrToolNotFound, tool.Name, snap.Vendor)
		}
		for _, c := range tool.Commands[1:] {
			secondary(ctx, run, spec, tool.Name, c, snap)
		}
		return finish(snap), nil
	}
	return nil, fmt.Errorf("%w: %s (tried %s)", ErrToolNotFound, spec.Vendor, strings.Join(notFound, ", "))
}

// secondary runs one detail command and merges it; failures are warnings.
func secondary(ctx context.Context, run Runner, spec Spec, tool string, c Command, snap *inventory.Snapshot) {
	label := strings.TrimSpace(tool + " " + strings.Join(c.Args, " "))
	out, err := run(ctx, tool, c.Args...)
	if err != nil {
		snap.Warnings = append(snap.Warnings, fmt.Sprintf("%s: %v", label, err))
		return
	}
	if c.Apply != nil {
		if err := c.Apply(snap, out); err != nil {
			snap.Warnings = append(snap.Warnings, fmt.Sprintf("%s: %v", label, err))
		}
		return
	}
	extra, err := spec.ParseForm(c.Form, out)
	if err != nil {
		snap.Warnings = append(snap.Warnings, fmt.Sprintf("%s: %v", label, err))
		return
	}
	Merge(snap, extra)
}

// Parse parses one captured output of spec's tool, detecting the form
// unless form is given.
func Parse(spec Spec, form string, data []byte) (*inventory.Snapshot, error) {
	if form == "" {
		form = spec.Detect(data)
		if form == "" {
			// Let the parser say which forms it expected.
			snap, err := spec.Parse(data)
			return finish(snap), err
		}
	} else if !slices.Contains(spec.Forms, form) {
		return nil, fmt.Errorf("%w %q for %s (known: %s)", ErrUnknownForm, form, spec.Vendor, strings.Join(spec.Forms, ", "))
	}
	snap, err := spec.ParseForm(form, data)
	return finish(snap), err
}

// finish fills what the CLI output does not carry: each device's isolation
// capabilities from the model table.
func finish(snap *inventory.Snapshot) *inventory.Snapshot {
	if snap == nil {
		return nil
	}
	for i := range snap.Devices {
		d := &snap.Devices[i]
		if d.Model != "" {
			d.Isolation = inventory.IsolationFor(snap.Vendor, d.Model)
		}
		if d.Partitions == nil {
			d.Partitions = []inventory.Partition{}
		}
	}
	return snap
}
