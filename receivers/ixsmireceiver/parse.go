package ixsmireceiver

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/heteroflow/heteroflow/receivers/inventory"
	"github.com/heteroflow/heteroflow/receivers/nvidiasmireceiver"
	pu "github.com/heteroflow/heteroflow/receivers/smi/parseutil"
)

// ixsmi copies nvidia-smi: the default table has the same two-row device
// blocks under an "IX-ML" banner, and --query-gpu/--format=csv is accepted
// (gpustack's detector uses it), so the nvidia-smi parsers do the reading.
const (
	FormTable = "table" // ixsmi
	FormCSV   = "csv"   // ixsmi --query-gpu=… --format=csv
)

// Forms lists the forms in detection order.
var Forms = []string{FormTable, FormCSV}

// Detect names the form of data, or "".
func Detect(data []byte) string {
	switch {
	case bytes.Contains(data, []byte("IX-ML")):
		return FormTable
	case nvidiasmireceiver.Detect(data) == nvidiasmireceiver.FormCSV:
		return FormCSV
	}
	return ""
}

// ParseForm parses data as the named form.
func ParseForm(form string, data []byte) (*inventory.Snapshot, error) {
	switch form {
	case FormTable:
		return nvidiasmireceiver.ParseTableVendor(data, inventory.VendorIluvatar, "IX-ML")
	case FormCSV:
		return nvidiasmireceiver.ParseCSVVendor(data, inventory.VendorIluvatar)
	}
	return nil, fmt.Errorf("ixsmi: unknown form %q (known: %s)", form, strings.Join(Forms, ", "))
}

// Parse detects the form and parses it.
func Parse(data []byte) (*inventory.Snapshot, error) {
	if err := pu.CheckSize(data); err != nil {
		return nil, err
	}
	form := Detect(data)
	if form == "" {
		return nil, pu.Unrecognised("not ixsmi output (expected the IX-ML table or --query-gpu CSV with header)")
	}
	return ParseForm(form, data)
}
