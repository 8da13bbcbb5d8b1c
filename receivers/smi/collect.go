package smi

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/heteroflow/heteroflow/receivers/inventory"
	"github.com/heteroflow/heteroflow/receivers/npusmireceiver"
	"github.com/heteroflow/heteroflow/receivers/xpusmireceiver"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

// Collect takes one full snapshot of vendor's devices: it finds the first
// installed tool, runs its primary command, parses it, then runs the
// secondary commands and merges what they add. Errors: ErrUnknownVendor,
// ErrToolNotFound (no tool, or another vendor's tool of that name),
// ErrDriverNotLoaded (the tool fails or prints no devices), or a parse
// error for output the parser cannot read.
func Collect(ctx context.Context, vendor string, run Runner) (*inventory.Snapshot, error) {
	spec, err := Lookup(vendor)
	if err != nil {
		return nil, err
	}
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
		if errors.Is(err, xpusmireceiver.ErrIntelXPUSMI) {
			notFound = append(notFound, tool.Name+" (Intel's tool)")
			continue
		}
		if err != nil && snap == nil {
			return nil, fmt.Errorf("%s %s: %w", tool.Name, strings.Join(primary.Args, " "), err)
		}
		if len(snap.Devices) == 0 {
			return nil, fmt.Errorf("%w: %s lists no devices", ErrDriverNotLoaded, tool.Name)
		}
		if spec.Vendor == inventory.VendorAMD && snap.Vendor != inventory.VendorAMD {
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
	if spec.Vendor == inventory.VendorAscend && c.Form == npusmireceiver.FormMap {
		entries, err := npusmireceiver.ParseChipMap(out)
		if err != nil {
			snap.Warnings = append(snap.Warnings, fmt.Sprintf("%s: %v", label, err))
			return
		}
		npusmireceiver.ApplyChipMap(snap, entries)
		return
	}
	extra, err := spec.ParseForm(c.Form, out)
	if err != nil {
		snap.Warnings = append(snap.Warnings, fmt.Sprintf("%s: %v", label, err))
		return
	}
	Merge(snap, extra)
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
			d.Isolation = model.IsolationFor(snap.Vendor, d.Model)
		}
		if d.Partitions == nil {
			d.Partitions = []inventory.Partition{}
		}
	}
	return snap
}
