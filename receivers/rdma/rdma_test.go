package rdma

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// fakeSysfs builds a two-socket node: GPU 0 and mlx5_0 behind one PCIe
// switch on NUMA 0, GPU 1 on its own root port of the same root complex,
// GPU 2 and the RoCE adapter mlx5_1 (netdev ens2f0, down) on NUMA 1.
func fakeSysfs(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	mk := func(path string, files map[string]string) string {
		dir := filepath.Join(root, path)
		require.NoError(t, os.MkdirAll(dir, 0o755))
		for k, v := range files {
			require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, k)), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, k), []byte(v+"\n"), 0o644))
		}
		return dir
	}
	link := func(target, name string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755))
		require.NoError(t, os.Symlink(filepath.Join(root, target), filepath.Join(root, name)))
	}
	sw := "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0"
	gpu0 := mk(sw+"/0000:02:01.0/0000:03:00.0", map[string]string{"numa_node": "0"})
	nic0 := mk(sw+"/0000:02:02.0/0000:04:00.0", map[string]string{"numa_node": "0"})
	gpu1 := mk("sys/devices/pci0000:00/0000:00:02.0/0000:05:00.0", map[string]string{"numa_node": "0"})
	gpu2 := mk("sys/devices/pci0000:80/0000:80:01.0/0000:81:00.0", map[string]string{"numa_node": "1"})
	nic1 := mk("sys/devices/pci0000:80/0000:80:01.0/0000:82:00.0", map[string]string{"numa_node": "1"})
	mk(filepath.Join(nic1[len(root):], "net/ens2f0"), nil)
	for bus, dir := range map[string]string{"0000:03:00.0": gpu0, "0000:04:00.0": nic0, "0000:05:00.0": gpu1,
		"0000:81:00.0": gpu2, "0000:82:00.0": nic1} {
		link(dir[len(root)+1:], "sys/bus/pci/devices/"+bus)
	}
	mk("sys/class/infiniband/mlx5_0/ports/1", map[string]string{"state": "4: ACTIVE", "link_layer": "InfiniBand",
		"rate": "200 Gb/sec (4X HDR)", "gid_attrs/ndevs/0": "ib0"})
	link(nic0[len(root)+1:], "sys/class/infiniband/mlx5_0/device")
	mk("sys/class/infiniband/mlx5_1/ports/1", map[string]string{"state": "1: DOWN", "link_layer": "Ethernet", "rate": "100 Gb/sec (4X EDR)"})
	link(nic1[len(root)+1:], "sys/class/infiniband/mlx5_1/device")
	return root
}

func TestDetectAndAffinity(t *testing.T) {
	t.Parallel()
	root := fakeSysfs(t)
	devs, err := Detect(root)
	require.NoError(t, err)
	require.Len(t, devs, 2)
	ib, roce := devs[0], devs[1]
	require.Equal(t, "mlx5_0", ib.Name)
	require.Equal(t, inventory.RDMAInfiniBand, ib.Kind)
	require.Equal(t, "0000:04:00.0", *ib.BusID)
	require.Equal(t, 0, *ib.NUMANode)
	require.Equal(t, []inventory.RDMAPort{{Port: 1, State: "ACTIVE", LinkLayer: "InfiniBand", RateGbps: ptr(200.0), NetDev: "ib0"}}, ib.Ports)
	require.True(t, ib.Active())
	require.Equal(t, inventory.RDMARoCE, roce.Kind)
	require.Equal(t, "ens2f0", roce.Ports[0].NetDev, "from the PCI function's net/ directory")
	require.False(t, roce.Active())
	require.Equal(t, inventory.RDMAInfiniBand, Kind(devs))
	require.Empty(t, Kind(devs[1:]), "a RoCE adapter whose ports are down is no RDMA")

	snaps := []inventory.Snapshot{{Vendor: "nvidia", Devices: []inventory.Device{
		{Index: 0, BusID: ptr("0000:03:00.0")}, {Index: 1, BusID: ptr("0000:05:00.0")}, {Index: 2, BusID: ptr("0000:81:00.0")}}}}
	Attach(root, snaps, devs)
	require.Len(t, snaps[0].RDMA, 2)
	require.Equal(t, []inventory.RDMAAffinity{{Device: 0, Link: inventory.LinkPIX}, {Device: 1, Link: inventory.LinkPHB}, {Device: 2, Link: inventory.LinkSys}}, snaps[0].RDMA[0].Affinity)
	require.Equal(t, []inventory.RDMAAffinity{{Device: 2, Link: inventory.LinkPIX}, {Device: 0, Link: inventory.LinkSys}, {Device: 1, Link: inventory.LinkSys}}, snaps[0].RDMA[1].Affinity)

	none, err := Detect(t.TempDir())
	require.NoError(t, err)
	require.Empty(t, none)
}

func TestLinkWithoutPCIPaths(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	require.Equal(t, inventory.LinkNode, Link(root, "0000:01:00.0", "0000:02:00.0", ptr(1), ptr(1)))
	require.Equal(t, inventory.LinkSys, Link(root, "0000:01:00.0", "0000:02:00.0", ptr(0), ptr(1)))
	require.Equal(t, inventory.LinkSys, Link(root, "0000:01:00.0", "0000:02:00.0", nil, nil))
}

func ptr[T any](v T) *T { return &v }
