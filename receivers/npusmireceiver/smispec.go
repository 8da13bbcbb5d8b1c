package npusmireceiver

import (
	"github.com/heteroflow/heteroflow/receivers/internal/smicore"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// SMISpec tells smicore.Collect how to take a snapshot with npu-smi: info
// lists every chip; info -m maps (NPU, chip) to the logical id that
// ASCEND_RT_VISIBLE_DEVICES takes.
func SMISpec() smicore.Spec {
	cmds := []smicore.Command{
		{Args: []string{"info"}, Form: FormInfo},
		{Args: []string{"info", "-m"}, Form: FormMap, Secondary: true, Apply: applyChipMapOutput},
	}
	return smicore.Spec{Vendor: inventory.VendorAscend,
		Tools: []smicore.Tool{smicore.One("npu-smi", cmds...), smicore.One("/usr/local/sbin/npu-smi", cmds...)},
		Forms: Forms, Detect: Detect, ParseForm: ParseForm, Parse: Parse}
}

func applyChipMapOutput(snap *inventory.Snapshot, out []byte) error {
	entries, err := ParseChipMap(out)
	if err != nil {
		return err
	}
	ApplyChipMap(snap, entries)
	return nil
}
