package vendorcatalog

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestIsolationForMIGTables(t *testing.T) {
	t.Parallel()
	type prof struct {
		name    string
		compute int
		size    int
		max     int
		starts  []int
		memMiB  int64
	}
	// Memory = size/8 of the device; A100-40GB: 40960/8 = 5120 MiB per slice.
	a100 := []prof{
		{"1g.5gb", 1, 1, 7, []int{0, 1, 2, 3, 4, 5, 6}, 5120},
		{"1g.10gb", 1, 2, 4, []int{0, 2, 4, 6}, 10240},
		{"2g.10gb", 2, 2, 3, []int{0, 2, 4}, 10240},
		{"3g.20gb", 3, 4, 2, []int{0, 4}, 20480},
		{"4g.20gb", 4, 4, 1, []int{0}, 20480},
		{"7g.40gb", 7, 8, 1, []int{0}, 40960},
	}
	tests := []struct {
		vendor, model string
		hw            string
		names         []string
	}{
		{NVIDIA, "A100-SXM4-40GB", "mig", []string{"1g.5gb", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"}},
		{NVIDIA, "NVIDIA A100-SXM4-80GB", "mig", []string{"1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"}},
		{NVIDIA, "H100 80GB HBM3", "mig", []string{"1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"}},
		{NVIDIA, "H200", "mig", []string{"1g.18gb", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"}},
		{Ascend, "Ascend910B2", "vnpu", []string{"vir03_1c_8g", "vir06_1c_16g", "vir12_3c_32g"}},
		{Ascend, "310P3", "vnpu", []string{"vir01", "vir02", "vir04"}},
		{NVIDIA, "Tesla T4", "", nil},
		{Kunlunxin, "P800", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			t.Parallel()
			iso := IsolationFor(tt.vendor, tt.model)
			require.Equal(t, tt.hw, iso.Hardware)
			var names []string
			for _, p := range iso.Profiles {
				names = append(names, p.Name)
			}
			require.Equal(t, tt.names, names)
			require.True(t, iso.Sharing)
		})
	}
	iso := IsolationFor(NVIDIA, "A100-PCIE-40GB")
	for i, want := range a100 {
		p := iso.Profiles[i]
		require.Equal(t, want.name, p.Name)
		require.Equal(t, want.compute, p.ComputeSlices)
		require.Equal(t, 7, p.TotalSlices)
		require.Equal(t, want.size, p.Size)
		require.Equal(t, want.max, p.MaxCount)
		require.Equal(t, want.starts, p.Starts)
		require.Equal(t, want.memMiB, p.MemoryMiB)
	}
	// Ascend has no driver-level limits: Silver is never offered there.
	require.Empty(t, IsolationFor(Ascend, "910B3").DriverLimits)
	require.False(t, IsolationFor(Biren, "BR104").Sharing)
}
