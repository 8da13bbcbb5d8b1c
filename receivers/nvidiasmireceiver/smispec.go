package nvidiasmireceiver

import (
	"github.com/heteroflow/heteroflow/receivers/internal/smicore"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// SMISpec tells smicore.Collect how to take a snapshot with nvidia-smi: the
// XML has every device field and MIG instance; topo -m adds links and NUMA.
func SMISpec() smicore.Spec {
	return smicore.Spec{Vendor: inventory.VendorNVIDIA,
		Tools: []smicore.Tool{smicore.One("nvidia-smi",
			smicore.Command{Args: []string{"-q", "-x"}, Form: FormXML},
			smicore.Command{Args: []string{"topo", "-m"}, Form: FormTopo, Secondary: true})},
		Forms: Forms, Detect: Detect, ParseForm: ParseForm, Parse: Parse}
}
