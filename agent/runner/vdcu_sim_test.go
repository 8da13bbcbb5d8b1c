package runner

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/agent/protocol"
	"github.com/heteroflow/heteroflow/receivers/fakesmi"
)

// TestGoldVDCUOnSimulatedHygon: a Gold vDCU is carved through hy-smi
// virtual, listed before the task gets it, named in HIP_VISIBLE_DEVICES,
// and gone after release; a second one that does not fit in memory fails
// with nothing left behind.
func TestGoldVDCUOnSimulatedHygon(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := fakesmi.Profile{Vendor: "hygon", Model: "K100_AI", Count: 2, MemoryMiB: 65520}
	cli := fakeCLI{fakesmi.Options{Profile: &p, StatePath: filepath.Join(dir, "s.json"), LogPath: filepath.Join(dir, "l.jsonl")}}
	iso := &Isolator{CLI: cli, Logger: quietLogger}
	ctx := context.Background()
	slice := func(mem int) []protocol.DeviceSlice {
		return []protocol.DeviceSlice{{Vendor: "hygon", Index: 1, Isolation: protocol.IsolationVDCU, ComputeUnits: 20, MemoryMiB: mem}}
	}
	prep, err := iso.Prepare(ctx, "gold", slice(32768))
	require.NoError(t, err)
	env, err := VisibilityEnv(prep.Devices, false)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"HIP_VISIBLE_DEVICES": prep.Devices[0].PartitionID}, env)
	st, err := fakesmi.LoadState(cli.o.StatePath)
	require.NoError(t, err)
	require.Len(t, st.Partitions, 1)

	_, err = iso.Prepare(ctx, "gold", slice(40000))
	require.ErrorContains(t, err, "not enough memory")
	require.NoError(t, prep.Release(ctx))
	st, _ = fakesmi.LoadState(cli.o.StatePath)
	require.Empty(t, st.Partitions)

	log, err := fakesmi.ReadLog(cli.o.LogPath)
	require.NoError(t, err)
	var lines []string
	for _, c := range log {
		lines = append(lines, c.Tool+" "+joinArgs(c.Args))
	}
	require.Equal(t, []string{
		"hy-smi virtual -create-vdevices 1 -d 1 -vdevice-compute-units 20 -vdevice-memory-size 32768",
		"hy-smi virtual -show-vdevice-info",
		"hy-smi virtual -create-vdevices 1 -d 1 -vdevice-compute-units 20 -vdevice-memory-size 40000",
		"hy-smi virtual -destroy-vdevice " + prep.Devices[0].PartitionID,
	}, lines)
}

func joinArgs(a []string) string {
	out := ""
	for i, x := range a {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out
}
