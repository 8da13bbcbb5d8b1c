package efsmireceiver

import (
	"github.com/heteroflow/heteroflow/receivers/internal/smicore"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// SMISpec tells smicore.Collect how to take a snapshot with efsmi.
func SMISpec() smicore.Spec {
	return smicore.Spec{Vendor: inventory.VendorEnflame,
		Tools: []smicore.Tool{smicore.One("efsmi", smicore.Command{Form: FormTable})},
		Forms: Forms, Detect: Detect, ParseForm: ParseForm, Parse: Parse}
}
