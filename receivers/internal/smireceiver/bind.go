package smireceiver

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// ErrNotBound means no CollectFunc was bound before the receiver scraped.
var ErrNotBound = errors.New("smireceiver: no vendor collector bound (call smireceiver.Bind, as collector.Components does)")

// bound is the process-wide vendor collector (receivers/smi's Collect).
//
// Why a binding instead of an import: receivers/smi imports every vendor
// parser package (receivers/<x>receiver), and those same packages hold the
// receiver factories, so a factory importing smi would be an import cycle.
// The distribution (collector.Components) binds smi.Collect once at start.
var bound atomic.Pointer[CollectFunc]

// Binding is what receivers/smi provides to the receivers.
type Binding struct {
	Collect CollectFunc
	// Unavailable classifies "vendor absent" errors (smi.Unavailable).
	Unavailable func(error) bool
	// ToolNotFound is smi's sentinel for a missing CLI; ExecRunner wraps it
	// too, so smi recognises a missing name and tries the next one.
	ToolNotFound error
	// ToolNames lists every CLI name a vendor answers to (xpu-smi and
	// xpu_smi, hy-smi and /opt/hyhal/bin/hy-smi): tool_path replaces each.
	ToolNames func(vendor string) []string
}

// Bind sets the collector every vendor receiver created without an explicit
// Spec.Collect uses.
func Bind(b Binding) {
	bound.Store(&b.Collect)
	if b.Unavailable != nil {
		boundUnavailable.Store(&b.Unavailable)
	}
	if b.ToolNotFound != nil {
		boundNotFound.Store(&b.ToolNotFound)
	}
	if b.ToolNames != nil {
		boundToolNames.Store(&b.ToolNames)
	}
}

// toolNames is every name tool_path replaces for vendor: the spec's tool
// plus what the binding knows.
func toolNames(vendor, tool string) []string {
	names := []string{tool}
	if fn := boundToolNames.Load(); fn != nil {
		names = append(names, (*fn)(vendor)...)
	}
	return names
}

var (
	boundUnavailable atomic.Pointer[func(error) bool]
	boundNotFound    atomic.Pointer[error]
	boundToolNames   atomic.Pointer[func(string) []string]
)

// notFoundSentinel is the bound missing-CLI sentinel, or ErrToolNotFound.
func notFoundSentinel() error {
	if e := boundNotFound.Load(); e != nil {
		return *e
	}
	return ErrToolNotFound
}

func boundCollect(ctx context.Context, vendor string, run Runner) (*inventory.Snapshot, error) {
	fn := bound.Load()
	if fn == nil {
		return nil, fmt.Errorf("%s: %w", vendor, ErrNotBound)
	}
	return (*fn)(ctx, vendor, run)
}

func isBoundUnavailable(err error) bool {
	fn := boundUnavailable.Load()
	return fn != nil && (*fn)(err)
}
