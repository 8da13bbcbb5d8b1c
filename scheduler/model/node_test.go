package model

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/receivers/inventory"
)

func TestNewNodeFromInventory(t *testing.T) {
	t.Parallel()
	mem, numa, uuid := int64(81920), 1, "GPU-abc"
	devs := []inventory.Device{
		{Index: 0, UUID: &uuid, Model: "NVIDIA A100-SXM4-80GB", MemoryTotalMiB: &mem, NUMANode: &numa,
			Links: []inventory.Link{{Peer: 1, Type: inventory.LinkNVLink}}},
		{Index: 1, Model: "NVIDIA A100-SXM4-80GB"}, // memory unknown: only memory-free requests fit
	}
	n, err := NewNodeFromInventory("n1", map[string]string{"zone": "a"}, 64000, 512000, RDMAInfiniBand, inventory.VendorNVIDIA, devs)
	require.NoError(t, err)
	require.Len(t, n.Devices, 2)
	d := n.Devices[0]
	require.Equal(t, "GPU-abc", d.UUID)
	require.Equal(t, int64(81920), d.MemoryMiB)
	require.Equal(t, 1, d.NUMA)
	require.Equal(t, "mig", d.Isolation.Hardware, "capabilities filled from the table")
	require.Equal(t, "7g.80gb", d.Isolation.Profiles[5].Name)
	require.Equal(t, -1, n.Devices[1].NUMA)
	require.Equal(t, int64(0), n.Devices[1].MemoryMiB)

	// What the agent reported wins over the table.
	devs[1].Isolation = inventory.Isolation{Sharing: true}
	n, err = NewNodeFromInventory("n1", nil, 1, 1, "", inventory.VendorNVIDIA, devs)
	require.NoError(t, err)
	require.Empty(t, n.Devices[1].Isolation.Hardware)

	_, err = NewNodeFromInventory("n1", nil, 1, 1, "ethernet", inventory.VendorNVIDIA, devs)
	require.ErrorContains(t, err, "rdma")
	_, err = NewNodeFromInventory("", nil, 1, 1, "", inventory.VendorNVIDIA, devs)
	require.ErrorContains(t, err, "name")
}

func TestRequestNormalize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		r     Request
		err   string
		milli int32
	}{
		{"defaults to bronze", Request{ID: "a", DeviceCount: 1, ComputePercent: 25}, "", 250},
		{"gold without compute is whole", Request{ID: "a", DeviceCount: 1, QoS: QoSGold, MemoryMiB: 1}, "", 1000},
		{"memory only share", Request{ID: "a", DeviceCount: 1, MemoryMiB: 1024, QoS: QoSSilver}, "", 0},
		{"fractional percent", Request{ID: "a", DeviceCount: 1, ComputePercent: 22.5}, "", 225},
		{"bad qos", Request{ID: "a", QoS: "platinum"}, "qos", 0},
		{"memory without device", Request{ID: "a", MemoryMiB: 1}, "device_count", 0},
		{"percent over 100", Request{ID: "a", DeviceCount: 1, ComputePercent: 101}, "compute_percent", 0},
		{"gang without size", Request{ID: "a", Gang: "g"}, "gang_size", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := tt.r
			err := r.Normalize()
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.milli, r.ComputeMilli)
			require.NotEmpty(t, r.ShapeKey())
		})
	}
}
