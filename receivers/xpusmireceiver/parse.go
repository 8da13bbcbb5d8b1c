package xpusmireceiver

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/heteroflow/heteroflow/receivers/internal/smicore"
	"github.com/heteroflow/heteroflow/receivers/inventory"
	pu "github.com/heteroflow/heteroflow/receivers/smi/parseutil"
)

// Output forms (names accepted by `heteroflow smi parse --format`).
const (
	FormTable   = "table"   // xpu_smi / xpu-smi default DEVICES table
	FormMachine = "machine" // xpu-smi -m, one whitespace-separated row per device
)

// Forms lists the forms in detection order.
var Forms = []string{FormTable, FormMachine}

// ErrIntelXPUSMI means the output came from Intel's xpu-smi (xpumanager),
// an unrelated tool with the same name as Kunlunxin's.
var ErrIntelXPUSMI = fmt.Errorf("%w: this is Intel's xpu-smi (xpumanager), not Kunlunxin's xpu-smi / 这是 Intel 的 xpu-smi，不是昆仑芯 xpu-smi", smicore.ErrForeignTool)

// IsIntel recognises Intel xpu-smi output: `xpu-smi discovery` tables and
// `-j` JSON name the vendor "Intel(R) Corporation" or the tool itself.
func IsIntel(data []byte) bool {
	for _, marker := range [][]byte{
		[]byte("Intel(R) Corporation"), []byte("Intel(R) XPU"), []byte("Intel(R) Data Center GPU"),
		[]byte(`"device_list"`), []byte("Level Zero"), []byte("xpumanager"),
	} {
		if bytes.Contains(data, marker) {
			return true
		}
	}
	return false
}

// Detect names the form of data, or "".
func Detect(data []byte) string {
	switch {
	case IsIntel(data):
		return ""
	case bytes.Contains(data, []byte("DevID")) && bytes.Contains(data, []byte("PCI Addr")):
		return FormTable
	}
	if _, err := ParseMachine(data); err == nil {
		return FormMachine
	}
	return ""
}

// ParseForm parses data as the named form.
func ParseForm(form string, data []byte) (*inventory.Snapshot, error) {
	if IsIntel(data) {
		return nil, ErrIntelXPUSMI
	}
	switch form {
	case FormTable:
		return ParseTable(data)
	case FormMachine:
		return ParseMachine(data)
	}
	return nil, fmt.Errorf("xpu-smi: unknown form %q (known: %s)", form, strings.Join(Forms, ", "))
}

// Parse detects the form and parses it; Intel xpu-smi output is refused
// with ErrIntelXPUSMI.
func Parse(data []byte) (*inventory.Snapshot, error) {
	if err := pu.CheckSize(data); err != nil {
		return nil, err
	}
	if IsIntel(data) {
		return nil, ErrIntelXPUSMI
	}
	form := Detect(data)
	if form == "" {
		return nil, pu.Unrecognised("not Kunlunxin xpu-smi output (expected the DEVICES table or xpu-smi -m rows)")
	}
	return ParseForm(form, data)
}
