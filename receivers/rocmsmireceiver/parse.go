package rocmsmireceiver

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/heteroflow/heteroflow/receivers/inventory"
	pu "github.com/heteroflow/heteroflow/receivers/smi/parseutil"
)

// Output forms (names accepted by `heteroflow smi parse --format`).
const (
	FormJSON  = "json"  // rocm-smi … --json
	FormTable = "table" // rocm-smi (concise table)
	FormKV    = "kv"    // GPU[i] : key: value views (--showtoponuma, -a)
)

// Forms lists the forms in detection order.
var Forms = []string{FormJSON, FormTable, FormKV}

// JSONArgs are the flags for one full snapshot (the set gpustack uses, plus
// the bus id).
var JSONArgs = []string{"--showid", "--showbus", "--showmeminfo", "vram", "--showpower", "--showserial",
	"--showuse", "--showtemp", "--showproductname", "--showuniqueid", "--json"}

// Detect names the form of data, or "".
func Detect(data []byte) string {
	t := bytes.TrimSpace(data)
	switch {
	case bytes.HasPrefix(t, []byte("{")):
		return FormJSON
	case reKV.Match(firstKV(t)):
		return FormKV
	case bytes.Contains(t, []byte("Temp")) && (bytes.Contains(t, []byte("System Management Interface")) || bytes.Contains(t, []byte("VRAM%"))):
		return FormTable
	}
	return ""
}

func firstKV(t []byte) []byte {
	for _, l := range bytes.Split(t, []byte("\n")) {
		l = bytes.TrimSpace(l)
		if reKV.Match(l) {
			return l
		}
	}
	return nil
}

// ParseForm parses data as the named form.
func ParseForm(form string, data []byte) (*inventory.Snapshot, error) {
	switch form {
	case FormJSON:
		return ParseJSON(data)
	case FormTable:
		return ParseConcise(data)
	case FormKV:
		return ParseKV(data)
	}
	return nil, fmt.Errorf("rocm-smi: unknown form %q (known: %s)", form, strings.Join(Forms, ", "))
}

// Parse detects the form and parses it.
func Parse(data []byte) (*inventory.Snapshot, error) {
	if err := pu.CheckSize(data); err != nil {
		return nil, err
	}
	form := Detect(data)
	if form == "" {
		return nil, pu.Unrecognised("not rocm-smi output (expected --json, the concise table, or GPU[i] : key: value lines)")
	}
	return ParseForm(form, data)
}
