package ixsmireceiver

import (
	"github.com/heteroflow/heteroflow/receivers/internal/smicore"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// SMISpec tells smicore.Collect how to take a snapshot with ixsmi.
func SMISpec() smicore.Spec {
	return smicore.Spec{Vendor: inventory.VendorIluvatar,
		Tools: []smicore.Tool{smicore.One("ixsmi", smicore.Command{Form: FormTable})},
		Forms: Forms, Detect: Detect, ParseForm: ParseForm, Parse: Parse}
}
