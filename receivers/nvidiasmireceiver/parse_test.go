package nvidiasmireceiver

import (
	"testing"

	"github.com/heteroflow/heteroflow/receivers/smi/smitest"
	"github.com/stretchr/testify/require"
)

var fuzzSeeds = []string{
	"<nvidia_smi_log><gpu><uuid>x</uuid></gpu></nvidia_smi_log>",
	"GPU 0: X (UUID: GPU-1)\n  MIG 1g.5gb Device 0: (UUID: MIG-1)\n",
	"\tGPU0\tCPU Affinity\nGPU0\t X \t0\n",
	"index, name\n0, A\n",
}

func TestXMLSchemas(t *testing.T) {
	t.Parallel()
	snap, err := ParseXML(smitest.Fixture(t, "xml-550-h100-mig.txt"))
	require.NoError(t, err)
	require.Len(t, snap.Devices, 2)
	d0, d1 := snap.Devices[0], snap.Devices[1]
	// v12 schema: power from gpu_power_readings.
	require.InDelta(t, 118.37, *d0.PowerWatts, 1e-9)
	require.InDelta(t, 700.0, *d0.PowerLimitWatts, 1e-9)
	require.Nil(t, d0.UtilizationPercent, "gpu_util is N/A under MIG")
	require.Equal(t, "0000:1b:00.0", *d0.BusID)
	require.Len(t, d0.Partitions, 2)
	require.Equal(t, "2/0", d0.Partitions[0].ID)
	require.Equal(t, 60, *d0.Partitions[0].ComputeUnits)
	require.Equal(t, "ok", *d0.Health)
	require.Equal(t, "warning", *d1.Health, "remapped row pending")
	require.Equal(t, int64(2), *d1.ECCErrors)

	win, err := ParseXML(smitest.Fixture(t, "xml-472-windows-wddm.txt"))
	require.NoError(t, err)
	w := win.Devices[0]
	require.Nil(t, w.PowerWatts, "N/A power")
	require.InDelta(t, 175.0, *w.PowerLimitWatts, 1e-9, "v11 power_limit")
	require.Nil(t, w.Serial)
	require.Nil(t, w.Health, "no readable health counters")
}

func TestCSVUnknowns(t *testing.T) {
	t.Parallel()
	snap, err := ParseCSV(smitest.Fixture(t, "csv-a30-not-supported.txt"))
	require.NoError(t, err)
	require.Equal(t, "535.129.03", *snap.DriverVersion)
	d := snap.Devices[1]
	require.Nil(t, d.MemoryUsedMiB)
	require.Nil(t, d.UtilizationPercent)
	require.Nil(t, d.PowerWatts)
	require.Nil(t, d.Serial)
	require.Equal(t, int64(24576), *d.MemoryTotalMiB)
}

func TestTopoLinksAndNUMA(t *testing.T) {
	t.Parallel()
	snap, err := ParseTopo(smitest.Fixture(t, "topo-4gpu-nvlink.txt"))
	require.NoError(t, err)
	require.Len(t, snap.Devices, 4, "NIC rows are not devices")
	g0 := snap.Devices[0]
	require.Equal(t, 0, *g0.NUMANode)
	require.Equal(t, 18, g0.Links[0].Lanes)
	require.EqualValues(t, "sys", g0.Links[2].Type)
	require.Equal(t, 1, *snap.Devices[3].NUMANode)
}

func TestMIGLGIAndList(t *testing.T) {
	t.Parallel()
	lgi, err := ParseMIGInstances(smitest.Fixture(t, "mig-lgi-h100.txt"))
	require.NoError(t, err)
	require.Equal(t, "4:4", *lgi.Devices[0].Partitions[0].Placement)
	list, err := ParseList(smitest.Fixture(t, "list-h100-mig.txt"))
	require.NoError(t, err)
	require.Len(t, list.Devices, 2)
	require.Equal(t, "3g.40gb", *list.Devices[0].Partitions[0].Profile)
}

func TestNormalisedBusID(t *testing.T) {
	t.Parallel()
	snap, err := Parse(smitest.Fixture(t, "table-535-a40.txt"))
	require.NoError(t, err)
	require.Equal(t, "0000:52:00.0", *snap.Devices[1].BusID)
	require.Equal(t, "NVIDIA A40", snap.Devices[1].Model)
	require.InDelta(t, 93.0, *snap.Devices[1].UtilizationPercent, 1e-9)
}
