package fakesmi_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/receivers/fakesmi"
	"github.com/heteroflow/heteroflow/receivers/smi"
	"github.com/heteroflow/heteroflow/receivers/vendorcatalog"
)

// catalogProfiles is one simulated node per catalog vendor.
var catalogProfiles = map[string]fakesmi.Profile{
	"nvidia":    {Vendor: "nvidia", Model: "NVIDIA H100 80GB HBM3", Count: 2, MemoryMiB: 81559},
	"amd":       {Vendor: "amd", Model: "AMD Instinct MI210", Count: 2, MemoryMiB: 65520},
	"hygon":     {Vendor: "hygon", Model: "K100_AI", Count: 2, MemoryMiB: 65520},
	"ascend":    {Vendor: "ascend", Model: "910B3", Count: 2, MemoryMiB: 65536},
	"cambricon": {Vendor: "cambricon", Model: "MLU370-X8", Count: 2, MemoryMiB: 23374},
	"kunlunxin": {Vendor: "kunlunxin", Model: "P800 OAM", Count: 2, MemoryMiB: 98304},
	"mthreads":  {Vendor: "mthreads", Model: "MTT S4000", Count: 2, MemoryMiB: 49152},
	"biren":     {Vendor: "biren", Model: "BR104P", Count: 2, MemoryMiB: 32768},
	"iluvatar":  {Vendor: "iluvatar", Model: "Iluvatar BI-V150", Count: 2, MemoryMiB: 32768},
	"metax":     {Vendor: "metax", Model: "MXC550", Count: 2, MemoryMiB: 65536},
	"enflame":   {Vendor: "enflame", Model: "S60", Count: 2, MemoryMiB: 49120},
}

// TestEveryCatalogCLIIsSimulated: every CLI of every catalog vendor is
// simulated, and what it prints for the collector's primary command parses
// in the catalog's first form.
func TestEveryCatalogCLIIsSimulated(t *testing.T) {
	t.Parallel()
	require.ElementsMatch(t, append(vendorcatalog.ToolNames(), vendorcatalog.SilverToolNames()...), fakesmi.Tools)
	for _, e := range vendorcatalog.Catalog() {
		p, ok := catalogProfiles[e.ID]
		require.True(t, ok, "catalog vendor %s has no fakesmi profile", e.ID)
		require.NoError(t, p.Validate())
		spec, err := smi.Lookup(e.ID)
		require.NoError(t, err)
		for _, c := range e.CLIs {
			t.Run(c.Name, func(t *testing.T) {
				var args []string
				for _, tool := range spec.Tools {
					if tool.Name == c.Name {
						args = tool.Commands[0].Args
					}
				}
				var out bytes.Buffer
				o := fakesmi.Options{Profile: &p, StatePath: filepath.Join(t.TempDir(), "s.json")}
				require.NoError(t, fakesmi.Run(&out, o, c.Name, args))
				require.Equal(t, c.Forms[0], spec.Detect(out.Bytes()))
				snap, err := smi.Parse(e.ID, c.Forms[0], out.Bytes())
				require.NoError(t, err)
				require.Len(t, snap.Devices, p.Count)
			})
		}
	}
}
