package hysmireceiver

import (
	"github.com/heteroflow/heteroflow/receivers/internal/smicore"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// SMISpec tells smicore.Collect how to take a snapshot with hy-smi (on PATH,
// or where DTK installs it).
func SMISpec() smicore.Spec {
	cmd := smicore.Command{Args: JSONArgs, Form: FormJSON}
	return smicore.Spec{Vendor: inventory.VendorHygon,
		Tools: []smicore.Tool{smicore.One("hy-smi", cmd), smicore.One("/opt/hyhal/bin/hy-smi", cmd)},
		Forms: Forms, Detect: Detect, ParseForm: ParseForm, Parse: Parse}
}
