package smicore

import "errors"

// Sentinel errors returned by Collect; test with errors.Is.
var (
	// ErrToolNotFound: none of the vendor's CLI names is installed (or the
	// binary found is another vendor's tool of the same name, e.g. Intel's
	// xpu-smi on a Kunlunxin lookup). The vendor is simply absent.
	ErrToolNotFound = errors.New("vendor CLI not found")
	// ErrDriverNotLoaded: the CLI exists but exits non-zero or prints no
	// device table (driver not loaded, device nodes missing, no permission).
	ErrDriverNotLoaded = errors.New("vendor CLI cannot reach its driver")
	// ErrUnknownVendor: the vendor name is not one of inventory.Vendors.
	ErrUnknownVendor = errors.New("unknown vendor")
	// ErrUnknownForm: --format names a form the vendor's parser lacks.
	ErrUnknownForm = errors.New("unknown output form")
)

// Unavailable reports whether err means "this vendor is not on this node"
// (no tool, no driver) rather than a broken scrape.
func Unavailable(err error) bool {
	return errors.Is(err, ErrToolNotFound) || errors.Is(err, ErrDriverNotLoaded)
}

// ErrForeignTool: the binary answers to the vendor's tool name but is
// another vendor's program (Intel's xpu-smi on a Kunlunxin lookup). Parsers
// wrap it; Collect then tries the vendor's next tool name.
var ErrForeignTool = errors.New("another vendor's tool of the same name")
