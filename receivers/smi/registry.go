package smi

import (
	"context"
	"fmt"
	"strings"

	"github.com/heteroflow/heteroflow/receivers/brsmireceiver"
	"github.com/heteroflow/heteroflow/receivers/cnmonreceiver"
	"github.com/heteroflow/heteroflow/receivers/efsmireceiver"
	"github.com/heteroflow/heteroflow/receivers/hysmireceiver"
	"github.com/heteroflow/heteroflow/receivers/internal/smicore"
	"github.com/heteroflow/heteroflow/receivers/inventory"
	"github.com/heteroflow/heteroflow/receivers/ixsmireceiver"
	"github.com/heteroflow/heteroflow/receivers/mthreadsgmireceiver"
	"github.com/heteroflow/heteroflow/receivers/mxsmireceiver"
	"github.com/heteroflow/heteroflow/receivers/npusmireceiver"
	"github.com/heteroflow/heteroflow/receivers/nvidiasmireceiver"
	"github.com/heteroflow/heteroflow/receivers/rocmsmireceiver"
	"github.com/heteroflow/heteroflow/receivers/vendorcatalog"
	"github.com/heteroflow/heteroflow/receivers/xpusmireceiver"
)

// The types, runner and sentinels live in smicore so that each vendor
// package can collect through its own Spec; they are re-exported here for
// callers of the registry (the agent, `heteroflow smi`, tests).
type (
	Spec    = smicore.Spec
	Tool    = smicore.Tool
	Command = smicore.Command
	Runner  = smicore.Runner
)

var (
	ErrToolNotFound    = smicore.ErrToolNotFound
	ErrDriverNotLoaded = smicore.ErrDriverNotLoaded
	ErrUnknownVendor   = smicore.ErrUnknownVendor
	ErrUnknownForm     = smicore.ErrUnknownForm
	ErrForeignTool     = smicore.ErrForeignTool

	// ExecRunner runs real binaries found on PATH (or by absolute path).
	ExecRunner = smicore.ExecRunner
	// Unavailable reports whether err means "this vendor is not on this node".
	Unavailable = smicore.Unavailable
	// Merge folds a secondary snapshot into a primary one.
	Merge = smicore.Merge
)

// specs registers each catalog vendor's parser (receivers/vendorcatalog holds
// everything else about the vendor); TestCatalogVendorsHaveParsers keeps the
// two in step.
var specs = map[string]func() Spec{
	inventory.VendorNVIDIA:    nvidiasmireceiver.SMISpec,
	inventory.VendorAMD:       rocmsmireceiver.SMISpec,
	inventory.VendorHygon:     hysmireceiver.SMISpec,
	inventory.VendorAscend:    npusmireceiver.SMISpec,
	inventory.VendorCambricon: cnmonreceiver.SMISpec,
	inventory.VendorKunlunxin: xpusmireceiver.SMISpec,
	inventory.VendorMThreads:  mthreadsgmireceiver.SMISpec,
	inventory.VendorBiren:     brsmireceiver.SMISpec,
	inventory.VendorIluvatar:  ixsmireceiver.SMISpec,
	inventory.VendorMetaX:     mxsmireceiver.SMISpec,
	inventory.VendorEnflame:   efsmireceiver.SMISpec,
}

// Lookup returns the vendor's spec.
func Lookup(vendor string) (Spec, error) {
	mk, ok := specs[strings.ToLower(strings.TrimSpace(vendor))]
	if !ok {
		return Spec{}, fmt.Errorf("%w %q (known: %s)", ErrUnknownVendor, vendor, strings.Join(inventory.Vendors, ", "))
	}
	return mk(), nil
}

// ToolVendor maps a tool name or install path (as fakesmi and wrappers use
// it) to its vendor, or "" when unknown (the vendor catalog's CLIs).
func ToolVendor(tool string) string { return vendorcatalog.ToolVendor(tool) }

// Collect takes one full snapshot of vendor's devices (see smicore.Collect).
// Errors: ErrUnknownVendor, ErrToolNotFound, ErrDriverNotLoaded, or a parse
// error for output the parser cannot read.
func Collect(ctx context.Context, vendor string, run Runner) (*inventory.Snapshot, error) {
	spec, err := Lookup(vendor)
	if err != nil {
		return nil, err
	}
	return smicore.Collect(ctx, spec, run)
}

// Parse parses one captured output of vendor's tool, detecting the form
// unless form is given.
func Parse(vendor, form string, data []byte) (*inventory.Snapshot, error) {
	spec, err := Lookup(vendor)
	if err != nil {
		return nil, err
	}
	return smicore.Parse(spec, form, data)
}
