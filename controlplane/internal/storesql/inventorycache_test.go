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
	first, err := c.decode("n1", "ha", a)
	require.NoError(t, err)
	require.Equal(t, "H100", first[0].Devices[0].Model)
	again, err := c.decode("n1", "ha", append([]byte(nil), a...))
	require.NoError(t, err)
	require.Same(t, &first[0], &again[0], "unchanged text: the decoded value is reused")

	b := []byte(`[{"vendor":"nvidia","devices":[{"index":0,"model":"H200"}]}]`)
	changed, err := c.decode("n1", "hb", b)
	require.NoError(t, err)
	require.Equal(t, "H200", changed[0].Devices[0].Model)
	other, err := c.decode("n2", "ha", a)
	require.NoError(t, err)
	require.NotSame(t, &first[0], &other[0])

	empty, err := c.decode("n3", "", []byte(`[]`))
	require.NoError(t, err)
	require.NotNil(t, empty)
	require.Empty(t, empty)
	_, err = c.decode("n4", "", []byte(`{`))
	require.Error(t, err)
}

// TestInventoryCacheLookupByHash: a list skips the text only for the hash
// the cache decoded; another hash, another node, or no hash (rows from
// before the hash) read the text.
func TestInventoryCacheLookupByHash(t *testing.T) {
	c := newInventoryCache()
	a := []byte(`[{"vendor":"nvidia","devices":[{"index":0,"model":"H100"}]}]`)
	first, err := c.decode("n1", "ha", a)
	require.NoError(t, err)
	got, ok := c.lookup("n1", "ha")
	require.True(t, ok)
	require.Same(t, &first[0], &got[0])
	for _, miss := range [][2]string{{"n1", "hb"}, {"n2", "ha"}, {"n1", ""}} {
		_, ok := c.lookup(miss[0], miss[1])
		require.False(t, ok, "%v", miss)
	}
	// The same text under a new hash keeps the decoded value and serves
	// the new hash.
	again, err := c.decode("n1", "ha2", a)
	require.NoError(t, err)
	require.Same(t, &first[0], &again[0])
	_, ok = c.lookup("n1", "ha")
	require.False(t, ok)
	_, ok = c.lookup("n1", "ha2")
	require.True(t, ok)
	_, err = c.decode("n0", "", []byte(`[]`))
	require.NoError(t, err)
	_, ok = c.lookup("n0", "")
	require.False(t, ok, "no hash: never skipped")
}
