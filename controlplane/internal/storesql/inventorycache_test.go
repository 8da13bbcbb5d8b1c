package storesql

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestInventoryCacheReusesUnchangedText: the same stored text decodes once
// and is shared; a changed text (new devices) is decoded again; a node's
// entry never serves another node.
func TestInventoryCacheReusesUnchangedText(t *testing.T) {
	c := newInventoryCache()
	a := []byte(`[{"vendor":"nvidia","devices":[{"index":0,"model":"H100"}]}]`)
	first, err := c.decode("n1", a)
	require.NoError(t, err)
	require.Equal(t, "H100", first[0].Devices[0].Model)
	again, err := c.decode("n1", append([]byte(nil), a...))
	require.NoError(t, err)
	require.Same(t, &first[0], &again[0], "unchanged text: the decoded value is reused")

	b := []byte(`[{"vendor":"nvidia","devices":[{"index":0,"model":"H200"}]}]`)
	changed, err := c.decode("n1", b)
	require.NoError(t, err)
	require.Equal(t, "H200", changed[0].Devices[0].Model)
	other, err := c.decode("n2", a)
	require.NoError(t, err)
	require.NotSame(t, &first[0], &other[0])

	empty, err := c.decode("n3", []byte(`[]`))
	require.NoError(t, err)
	require.NotNil(t, empty)
	require.Empty(t, empty)
	_, err = c.decode("n4", []byte(`{`))
	require.Error(t, err)
}
