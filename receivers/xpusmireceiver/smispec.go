package xpusmireceiver

import (
	"github.com/heteroflow/heteroflow/receivers/internal/smicore"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// SMISpec tells smicore.Collect how to take a snapshot on a Kunlunxin node.
// Newer drivers ship xpu-smi (machine rows with -m); older ones xpu_smi (the
// DEVICES table). Intel's xpu-smi is refused by the parser (ErrIntelXPUSMI).
func SMISpec() smicore.Spec {
	return smicore.Spec{Vendor: inventory.VendorKunlunxin,
		Tools: []smicore.Tool{
			smicore.One("xpu-smi", smicore.Command{Args: []string{"-m"}, Form: FormMachine}),
			smicore.One("xpu_smi", smicore.Command{Form: FormTable}),
		},
		Forms: Forms, Detect: Detect, ParseForm: ParseForm, Parse: Parse}
}
