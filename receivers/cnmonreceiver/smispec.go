package cnmonreceiver

import (
	"github.com/heteroflow/heteroflow/receivers/internal/smicore"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// SMISpec tells smicore.Collect how to take a snapshot with cnmon.
func SMISpec() smicore.Spec {
	return smicore.Spec{Vendor: inventory.VendorCambricon,
		Tools: []smicore.Tool{smicore.One("cnmon", smicore.Command{Form: FormTable})},
		Forms: Forms, Detect: Detect, ParseForm: ParseForm, Parse: Parse}
}
