package collector

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/receivers/vendorcatalog"
)

// TestCatalogVendorsHaveReceivers: every vendor of the catalog has a
// receiver in the distribution, named after its first CLI (nvidia-smi →
// nvidia_smi), in catalog order, and no receiver lacks a catalog entry.
func TestCatalogVendorsHaveReceivers(t *testing.T) {
	t.Parallel()
	cat := vendorcatalog.Catalog()
	require.Len(t, vendorReceivers, len(cat))
	for i, e := range cat {
		require.Equal(t, e.ID, vendorReceivers[i].vendor)
		typ, err := ReceiverType(e.ID)
		require.NoError(t, err)
		require.Equal(t, strings.ReplaceAll(e.CLIs[0].Name, "-", "_"), typ.String())
	}
	_, err := ReceiverType("acme")
	require.ErrorContains(t, err, "nvidia")
}
