package brsmireceiver

import (
	"fmt"
	"strings"

	"github.com/heteroflow/heteroflow/receivers/inventory"
	"github.com/heteroflow/heteroflow/receivers/nvidiasmireceiver"
	pu "github.com/heteroflow/heteroflow/receivers/smi/parseutil"
)

// FormCSV is the only form accepted: a `--query-gpu=… --format=csv` table
// with its header row. Stability: development. No real brsmi output is
// public (see README.md); Biren's management library BRML mirrors NVML, and
// this parser accepts only the header-named CSV whose field names it checks,
// so a different real format fails loudly instead of being misread.
const FormCSV = "csv"

// Forms lists the forms.
var Forms = []string{FormCSV}

// Detect names the form of data, or "".
func Detect(data []byte) string {
	if nvidiasmireceiver.Detect(data) == nvidiasmireceiver.FormCSV {
		return FormCSV
	}
	return ""
}

// ParseForm parses data as the named form.
func ParseForm(form string, data []byte) (*inventory.Snapshot, error) {
	if form != FormCSV {
		return nil, fmt.Errorf("brsmi: unknown form %q (known: %s)", form, strings.Join(Forms, ", "))
	}
	return nvidiasmireceiver.ParseCSVVendor(data, inventory.VendorBiren)
}

// Parse parses the CSV form.
func Parse(data []byte) (*inventory.Snapshot, error) {
	if err := pu.CheckSize(data); err != nil {
		return nil, err
	}
	if Detect(data) == "" {
		return nil, pu.Unrecognised("not a brsmi --query-gpu CSV with header (the only brsmi form supported; see receivers/brsmireceiver/README.md)")
	}
	return ParseForm(FormCSV, data)
}
