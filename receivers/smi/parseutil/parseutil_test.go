package parseutil

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBusID(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"00000000:00:04.0": "0000:00:04.0", // nvidia-smi 8-digit domain
		"0000:DA:00.0":     "0000:da:00.0", // upper case
		"3b:00.0":          "0000:3b:00.0", // no domain
		"00:01:00.0":       "0000:01:00.0", // efsmi 2-digit domain
	} {
		got := BusID(in)
		require.NotNil(t, got, in)
		require.Equal(t, want, *got, in)
	}
	for _, bad := range []string{"", "N/A", "0000:zz:00.0", "0000:00:20.0", "1:2:3:4", "0000:00:00"} {
		require.Nil(t, BusID(bad), bad)
	}
}

func TestUnknownsAreNil(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"N/A", "[N/A]", "[Not Supported]", "NA", "-", " "} {
		require.Nil(t, Float(s), s)
		require.Nil(t, Str(s), s)
		require.Nil(t, MiB(s, "MiB"), s)
	}
	require.Equal(t, 0.0, *Float("0 %"), "a real zero stays zero")
}

func TestUnits(t *testing.T) {
	t.Parallel()
	require.Equal(t, int64(16368), *MiB("17163091968", "B"))
	require.Equal(t, int64(32768), *MiB("32 GiB", "MiB"))
	require.Equal(t, int64(32768), *MiB("32768 MB", "MiB"))
	require.InDelta(t, 66.92, *Float("66.92 W"), 1e-9)
	require.InDelta(t, 49.0, *Float("49.0C"), 1e-9)
	require.Nil(t, MiB("-5", "MiB"))
}

func TestLinesAndCells(t *testing.T) {
	t.Parallel()
	require.Equal(t, []string{"a", "b", "", "c"}, Lines([]byte("a \r\nb\t\n\nc")))
	require.Equal(t, []string{"0 x", "0000:00:01.0", ""}, Cells("| 0 x | 0000:00:01.0 |  |"))
	require.True(t, IsRule("+----+====+"))
	require.False(t, IsRule("| 0 |"))
}
