package mxsmireceiver

import (
	"github.com/heteroflow/heteroflow/receivers/internal/smicore"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// SMISpec tells smicore.Collect how to take a snapshot with mx-smi.
func SMISpec() smicore.Spec {
	return smicore.Spec{Vendor: inventory.VendorMetaX,
		Tools: []smicore.Tool{smicore.One("mx-smi", smicore.Command{Form: FormTable})},
		Forms: Forms, Detect: Detect, ParseForm: ParseForm, Parse: Parse}
}
