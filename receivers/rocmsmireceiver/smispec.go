package rocmsmireceiver

import (
	"github.com/heteroflow/heteroflow/receivers/internal/smicore"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// SMISpec tells smicore.Collect how to take a snapshot with rocm-smi.
func SMISpec() smicore.Spec {
	return smicore.Spec{Vendor: inventory.VendorAMD,
		Tools: []smicore.Tool{smicore.One("rocm-smi", smicore.Command{Args: JSONArgs, Form: FormJSON})},
		Forms: Forms, Detect: Detect, ParseForm: ParseForm, Parse: Parse}
}
