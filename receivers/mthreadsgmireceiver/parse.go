package mthreadsgmireceiver

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/heteroflow/heteroflow/receivers/inventory"
	pu "github.com/heteroflow/heteroflow/receivers/smi/parseutil"
)

// Output forms (names accepted by `heteroflow smi parse --format`).
const (
	FormTable = "table" // mthreads-gmi
	FormJSON  = "json"  // mthreads-gmi --query --json
)

// Forms lists the forms in detection order.
var Forms = []string{FormTable, FormJSON}

// Detect names the form of data, or "".
func Detect(data []byte) string {
	t := bytes.TrimSpace(data)
	switch {
	case bytes.HasPrefix(t, []byte("{")):
		return FormJSON
	case reBanner.Match(t):
		return FormTable
	}
	return ""
}

// ParseForm parses data as the named form.
func ParseForm(form string, data []byte) (*inventory.Snapshot, error) {
	switch form {
	case FormTable:
		return ParseTable(data)
	case FormJSON:
		return ParseJSON(data)
	}
	return nil, fmt.Errorf("mthreads-gmi: unknown form %q (known: %s)", form, strings.Join(Forms, ", "))
}

// Parse detects the form and parses it.
func Parse(data []byte) (*inventory.Snapshot, error) {
	if err := pu.CheckSize(data); err != nil {
		return nil, err
	}
	form := Detect(data)
	if form == "" {
		return nil, pu.Unrecognised("not mthreads-gmi output (expected the default table or --query --json)")
	}
	return ParseForm(form, data)
}
