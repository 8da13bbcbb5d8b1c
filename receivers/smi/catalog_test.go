package smi

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/receivers/inventory"
	"github.com/heteroflow/heteroflow/receivers/vendorcatalog"
)

// TestCatalogVendorsHaveParsers: adding a vendor is one catalog entry plus
// its parser. Every catalog vendor has a registered parser whose tools are
// exactly the catalog's CLIs (name, then install paths) and whose forms are
// the catalog's; every registered parser has a catalog entry.
func TestCatalogVendorsHaveParsers(t *testing.T) {
	t.Parallel()
	require.Equal(t, vendorcatalog.IDs(), inventory.Vendors)
	require.Len(t, specs, len(vendorcatalog.Catalog()), "a parser without a catalog entry, or the reverse")
	for _, e := range vendorcatalog.Catalog() {
		t.Run(e.ID, func(t *testing.T) {
			t.Parallel()
			spec, err := Lookup(e.ID)
			require.NoError(t, err, "catalog vendor %s has no parser registered in specs", e.ID)
			require.Equal(t, e.ID, spec.Vendor)
			var tools []string
			forms := map[string]bool{}
			for _, c := range e.CLIs {
				tools = append(tools, c.Name)
				tools = append(tools, c.Paths...)
				for _, f := range c.Forms {
					forms[f] = true
				}
			}
			require.Equal(t, tools, spec.ToolNames())
			specForms := map[string]bool{}
			for _, f := range spec.Forms {
				specForms[f] = true
			}
			require.Equal(t, forms, specForms, "catalog forms vs parser forms")
			for _, tool := range spec.Tools {
				require.Equal(t, e.ID, ToolVendor(tool.Name))
				c := cliOf(e, tool.Name)
				require.NotNil(t, c)
				require.Equal(t, c.Forms[0], tool.Commands[0].Form, "%s: the catalog's first form is the primary command's", tool.Name)
			}
			require.NotEmpty(t, e.DeviceID)
			require.NotEmpty(t, e.NodeGlobs, "device node globs")
			if len(e.ProcessVars) == 0 {
				require.NotEmpty(t, e.DeviceNode, "a vendor without a visible-device variable needs its device nodes")
			}
		})
	}
}

func cliOf(e vendorcatalog.Entry, tool string) *vendorcatalog.CLI {
	for i, c := range e.CLIs {
		if c.Name == tool {
			return &e.CLIs[i]
		}
		for _, p := range c.Paths {
			if p == tool {
				return &e.CLIs[i]
			}
		}
	}
	return nil
}
