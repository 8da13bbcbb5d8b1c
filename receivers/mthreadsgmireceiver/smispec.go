package mthreadsgmireceiver

import (
	"github.com/heteroflow/heteroflow/receivers/internal/smicore"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// SMISpec tells smicore.Collect how to take a snapshot with mthreads-gmi.
func SMISpec() smicore.Spec {
	return smicore.Spec{Vendor: inventory.VendorMThreads,
		Tools: []smicore.Tool{smicore.One("mthreads-gmi", smicore.Command{Form: FormTable})},
		Forms: Forms, Detect: Detect, ParseForm: ParseForm, Parse: Parse}
}
