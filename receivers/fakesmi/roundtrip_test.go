package fakesmi_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/heteroflow/heteroflow/receivers/fakesmi"
	"github.com/heteroflow/heteroflow/receivers/smi"
	"github.com/stretchr/testify/require"
)

// runner makes smi.Collect run the simulated tools in-process.
func runner(o fakesmi.Options) smi.Runner {
	return func(_ context.Context, name string, args ...string) ([]byte, error) {
		if smi.ToolVendor(name) == "" || smi.ToolVendor(name) != vendorOf(name) {
			return nil, fmt.Errorf("%w: %s", smi.ErrToolNotFound, name)
		}
		if vendorOf(name) != o.Profile.Vendor {
			return nil, fmt.Errorf("%w: %s", smi.ErrToolNotFound, name)
		}
		var buf bytes.Buffer
		err := fakesmi.Run(&buf, o, filepath.Base(name), args)
		return buf.Bytes(), err
	}
}

func vendorOf(tool string) string { return smi.ToolVendor(tool) }

// TestRoundTrip: what fakesmi prints for the collector's commands parses
// back to the profile and the state.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	profiles := []fakesmi.Profile{
		{Vendor: "nvidia", Model: "NVIDIA A100-SXM4-80GB", Count: 8, MemoryMiB: 81920},
		{Vendor: "amd", Model: "AMD Instinct MI210", Count: 2, MemoryMiB: 65520},
		{Vendor: "hygon", Model: "K100_AI", Count: 2, MemoryMiB: 65520},
		{Vendor: "ascend", Model: "910B3", Count: 4, MemoryMiB: 65536},
		{Vendor: "cambricon", Model: "MLU370-X8", Count: 2, MemoryMiB: 23374},
		{Vendor: "kunlunxin", Model: "P800 OAM", Count: 2, MemoryMiB: 98304},
		{Vendor: "mthreads", Model: "MTT S4000", Count: 2, MemoryMiB: 49152},
		{Vendor: "biren", Model: "BR104P", Count: 2, MemoryMiB: 32768},
		{Vendor: "iluvatar", Model: "Iluvatar BI-V150", Count: 2, MemoryMiB: 32768},
		{Vendor: "metax", Model: "MXC550", Count: 2, MemoryMiB: 65536},
		{Vendor: "enflame", Model: "S60", Count: 2, MemoryMiB: 49120},
	}
	for _, p := range profiles {
		t.Run(p.Vendor, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			state := filepath.Join(dir, "state.json")
			require.NoError(t, fakesmi.SetDevice(state, 1, fakesmi.DeviceState{UtilizationPercent: 42, MemoryUsedMiB: 1234}))
			o := fakesmi.Options{Profile: &p, StatePath: state, LogPath: filepath.Join(dir, "log.jsonl")}
			snap, err := smi.Collect(context.Background(), p.Vendor, runner(o))
			require.NoError(t, err)
			require.Empty(t, snap.Warnings)
			require.Len(t, snap.Devices, p.Count)
			for i, d := range snap.Devices {
				require.Equal(t, i, d.Index)
				require.Equal(t, p.Model, d.Model)
				require.Equal(t, p.MemoryMiB, *d.MemoryTotalMiB)
			}
			d1 := snap.Devices[1]
			require.InDelta(t, 42.0, *d1.UtilizationPercent, 0.5)
			if p.Vendor != "enflame" { // efsmi prints total memory only
				require.Equal(t, int64(1234), *d1.MemoryUsedMiB)
			}
			log, err := fakesmi.ReadLog(o.LogPath)
			require.NoError(t, err)
			require.NotEmpty(t, log)
		})
	}
}

// TestIsolationCommands: mig -cgi / -dgi and npu-smi create/destroy-vnpu
// change what the listing commands print, and every call is logged.
func TestIsolationCommands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := fakesmi.Profile{Vendor: "nvidia", Model: "NVIDIA H100 80GB HBM3", Count: 2, MemoryMiB: 81920}
	o := fakesmi.Options{Profile: &p, StatePath: filepath.Join(dir, "s.json"), LogPath: filepath.Join(dir, "l.jsonl"),
		Now: func() time.Time { return time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC) }}
	var out bytes.Buffer
	require.NoError(t, fakesmi.Run(&out, o, "nvidia-smi", []string{"mig", "-i", "0", "-cgi", "3g.40gb,1g.10gb", "-C"}))
	require.Contains(t, out.String(), "Successfully created GPU instance ID  1 on GPU  0 using profile MIG 3g.40gb")
	snap, err := smi.Collect(context.Background(), "nvidia", runner(o))
	require.NoError(t, err)
	require.Len(t, snap.Devices[0].Partitions, 2)
	require.Equal(t, int64(40960), *snap.Devices[0].Partitions[0].MemoryTotalMiB)
	require.Equal(t, int64(0), *snap.Devices[0].Partitions[0].MemoryUsedMiB)
	require.Nil(t, snap.Devices[0].UtilizationPercent, "a GPU in MIG mode reports utilisation N/A")

	// A task's memory inside GPU instance 1 shows in that instance's figures
	// (what the agent's simulated load writes), the other stays empty.
	require.NoError(t, fakesmi.SetLoads(o.StatePath, map[int]fakesmi.DeviceState{0: {UtilizationPercent: 30, MemoryUsedMiB: 8192,
		PartitionMemoryUsedMiB: map[string]int64{"1": 8192}}}))
	snap, err = smi.Collect(context.Background(), "nvidia", runner(o))
	require.NoError(t, err)
	require.Equal(t, "1/0", snap.Devices[0].Partitions[0].ID)
	require.Equal(t, int64(8192), *snap.Devices[0].Partitions[0].MemoryUsedMiB)
	require.Equal(t, int64(0), *snap.Devices[0].Partitions[1].MemoryUsedMiB)
	require.Nil(t, snap.Devices[0].UtilizationPercent, "still N/A with a task running, never 30 or 0")

	out.Reset()
	require.NoError(t, fakesmi.Run(&out, o, "nvidia-smi", []string{"mig", "-lgi"}))
	lgi, err := smi.Parse("nvidia", "mig", out.Bytes())
	require.NoError(t, err)
	require.Equal(t, "3g.40gb", *lgi.Devices[0].Partitions[0].Profile)

	require.NoError(t, fakesmi.Run(&out, o, "nvidia-smi", []string{"mig", "-i", "0", "-dgi", "-gi", "1"}))
	snap, err = smi.Collect(context.Background(), "nvidia", runner(o))
	require.NoError(t, err)
	require.Len(t, snap.Devices[0].Partitions, 1)
	require.Error(t, fakesmi.Run(&out, o, "nvidia-smi", []string{"mig", "-i", "0", "-dgi", "-gi", "99"}))

	log, err := fakesmi.ReadLog(o.LogPath)
	require.NoError(t, err)
	require.Equal(t, []string{"mig", "-i", "0", "-cgi", "3g.40gb,1g.10gb", "-C"}, log[0].Args)

	np := fakesmi.Profile{Vendor: "ascend", Model: "910B3", Count: 1, MemoryMiB: 65536}
	no := fakesmi.Options{Profile: &np, StatePath: filepath.Join(dir, "n.json")}
	out.Reset()
	require.NoError(t, fakesmi.Run(&out, no, "npu-smi", []string{"set", "-t", "create-vnpu", "-i", "0", "-c", "0", "-f", "vir05_1c_16g"}))
	require.Contains(t, out.String(), "vNPU ID : 101")
	require.NoError(t, fakesmi.Run(&out, no, "npu-smi", []string{"set", "-t", "destroy-vnpu", "-i", "0", "-c", "0", "-v", "101"}))
	require.Error(t, fakesmi.Run(&out, no, "npu-smi", []string{"set", "-t", "destroy-vnpu", "-i", "0", "-c", "0", "-v", "101"}))
}

// TestDetailForms: every secondary form the parsers accept is printed.
func TestDetailForms(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cases := []struct {
		p          fakesmi.Profile
		tool, form string
		args       []string
	}{
		{fakesmi.Profile{Vendor: "nvidia", Model: "NVIDIA A40", Count: 2, MemoryMiB: 46068}, "nvidia-smi", "list", []string{"-L"}},
		{fakesmi.Profile{Vendor: "nvidia", Model: "NVIDIA A40", Count: 2, MemoryMiB: 46068}, "nvidia-smi", "table", nil},
		{fakesmi.Profile{Vendor: "nvidia", Model: "NVIDIA A40", Count: 2, MemoryMiB: 46068}, "nvidia-smi", "csv", []string{"--query-gpu=index,name,memory.total,memory.used", "--format=csv"}},
		{fakesmi.Profile{Vendor: "ascend", Model: "910B3", Count: 2, MemoryMiB: 65536}, "npu-smi", "board", []string{"info", "-t", "board", "-i", "1", "-c", "0"}},
		{fakesmi.Profile{Vendor: "ascend", Model: "910B3", Count: 2, MemoryMiB: 65536}, "npu-smi", "common", []string{"info", "-t", "common", "-i", "1"}},
		{fakesmi.Profile{Vendor: "ascend", Model: "910B3", Count: 2, MemoryMiB: 65536}, "npu-smi", "usages", []string{"info", "-t", "usages", "-i", "1"}},
		{fakesmi.Profile{Vendor: "kunlunxin", Model: "R300", Count: 2, MemoryMiB: 32768}, "xpu_smi", "table", nil},
		{fakesmi.Profile{Vendor: "iluvatar", Model: "BI-V150", Count: 2, MemoryMiB: 32768}, "ixsmi", "csv", []string{"--query-gpu=index,name,memory.total", "--format=csv,nounits"}},
	}
	for _, c := range cases {
		var out bytes.Buffer
		o := fakesmi.Options{Profile: &c.p, StatePath: filepath.Join(dir, c.tool+".json")}
		require.NoError(t, fakesmi.Run(&out, o, c.tool, c.args), c.tool)
		snap, err := smi.Parse(c.p.Vendor, "", out.Bytes())
		require.NoError(t, err, "%s %v:\n%s", c.tool, c.args, out.String())
		s, _ := smi.Lookup(c.p.Vendor)
		require.Equal(t, c.form, s.Detect(out.Bytes()))
		require.NotEmpty(t, snap.Devices)
	}
}
