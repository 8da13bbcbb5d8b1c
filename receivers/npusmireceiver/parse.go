package npusmireceiver

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/heteroflow/heteroflow/receivers/inventory"
	pu "github.com/heteroflow/heteroflow/receivers/smi/parseutil"
)

// Output forms (names accepted by `heteroflow smi parse --format`).
const (
	FormInfo   = "info"   // npu-smi info
	FormMap    = "map"    // npu-smi info -m
	FormBoard  = "board"  // npu-smi info -t board -i N -c C
	FormCommon = "common" // npu-smi info -t common -i N
	FormUsages = "usages" // npu-smi info -t usages -i N
)

// Forms lists the forms in detection order.
var Forms = []string{FormInfo, FormMap, FormBoard, FormCommon, FormUsages}

// Detect names the form of data, or "".
func Detect(data []byte) string {
	switch {
	case reInfoVersion.Match(data):
		return FormInfo
	case bytes.Contains(data, []byte("Chip Logic ID")):
		return FormMap
	case bytes.Contains(data, []byte("PCIe Bus Info")) || bytes.Contains(data, []byte("Board ID")):
		return FormBoard
	case bytes.Contains(data, []byte("DDR Capacity(MB)")):
		return FormUsages
	case bytes.Contains(data, []byte("NPU ID")) && bytes.Contains(data, []byte("Aicore Usage Rate(%)")):
		return FormCommon
	}
	return ""
}

// ParseForm parses data as the named form.
func ParseForm(form string, data []byte) (*inventory.Snapshot, error) {
	switch form {
	case FormInfo:
		return ParseInfo(data)
	case FormMap:
		return ParseMap(data)
	case FormBoard:
		return ParseBoard(data)
	case FormCommon:
		return ParseCommon(data)
	case FormUsages:
		return ParseUsages(data)
	}
	return nil, fmt.Errorf("npu-smi: unknown form %q (known: %s)", form, strings.Join(Forms, ", "))
}

// Parse detects the form and parses it.
func Parse(data []byte) (*inventory.Snapshot, error) {
	if err := pu.CheckSize(data); err != nil {
		return nil, err
	}
	form := Detect(data)
	if form == "" {
		return nil, pu.Unrecognised("not npu-smi output (expected info, info -m, or info -t board|common|usages)")
	}
	return ParseForm(form, data)
}
