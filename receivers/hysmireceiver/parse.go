package hysmireceiver

import (
	"fmt"
	"strings"

	"github.com/heteroflow/heteroflow/receivers/inventory"
	"github.com/heteroflow/heteroflow/receivers/rocmsmireceiver"
	pu "github.com/heteroflow/heteroflow/receivers/smi/parseutil"
)

// hy-smi is Hygon's fork of rocm-smi: the same three output shapes with
// DCU/HCU naming and MiB instead of bytes, so the rocm-smi parsers do the
// reading and this package labels the result hygon.
const (
	FormJSON  = rocmsmireceiver.FormJSON  // hy-smi … --json
	FormTable = rocmsmireceiver.FormTable // hy-smi (DCU/HCU table)
	FormKV    = rocmsmireceiver.FormKV    // HCU[i] : key: value (hy-smi -a)
)

// Forms lists the forms in detection order.
var Forms = []string{FormJSON, FormTable, FormKV}

// JSONArgs are the flags for one full snapshot (the set gpustack passes to
// /opt/hyhal/bin/hy-smi).
var JSONArgs = rocmsmireceiver.JSONArgs

// Detect names the form of data, or "".
func Detect(data []byte) string { return rocmsmireceiver.Detect(data) }

// ParseForm parses data as the named form.
func ParseForm(form string, data []byte) (*inventory.Snapshot, error) {
	var (
		snap *inventory.Snapshot
		err  error
	)
	switch form {
	case FormJSON:
		snap, err = rocmsmireceiver.ParseJSON(data)
	case FormTable:
		snap, err = rocmsmireceiver.ParseConciseVendor(data, inventory.VendorHygon)
	case FormKV:
		snap, err = rocmsmireceiver.ParseKV(data)
	default:
		return nil, fmt.Errorf("hy-smi: unknown form %q (known: %s)", form, strings.Join(Forms, ", "))
	}
	if snap != nil {
		snap.Vendor = inventory.VendorHygon
	}
	return snap, err
}

// Parse detects the form and parses it.
func Parse(data []byte) (*inventory.Snapshot, error) {
	if err := pu.CheckSize(data); err != nil {
		return nil, err
	}
	form := Detect(data)
	if form == "" {
		return nil, pu.Unrecognised("not hy-smi output (expected --json, the DCU/HCU table, or HCU[i] : key: value lines)")
	}
	return ParseForm(form, data)
}
