package brsmireceiver

import (
	"strings"

	"github.com/heteroflow/heteroflow/receivers/internal/smicore"
	"github.com/heteroflow/heteroflow/receivers/inventory"
	"github.com/heteroflow/heteroflow/receivers/nvidiasmireceiver"
)

// SMISpec tells smicore.Collect how to take a snapshot with brsmi/birensmi,
// asked for nvidia-smi-style CSV (see README.md: development stability).
func SMISpec() smicore.Spec {
	csv := smicore.Command{Args: []string{"--query-gpu=" + strings.Join(nvidiasmireceiver.QueryFields, ","), "--format=csv,nounits"}, Form: FormCSV}
	return smicore.Spec{Vendor: inventory.VendorBiren,
		Tools: []smicore.Tool{smicore.One("brsmi", csv), smicore.One("birensmi", csv)},
		Forms: Forms, Detect: Detect, ParseForm: ParseForm, Parse: Parse}
}
