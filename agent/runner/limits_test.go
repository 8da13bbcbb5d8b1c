package runner

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/agent/protocol"
)

func TestSilverEnv(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		devices []protocol.DeviceSlice
		want    map[string]string
		err     string
	}{
		{"nvidia hami-core uniform", []protocol.DeviceSlice{
			{Vendor: "nvidia", MemoryMiB: 10240, ComputePercent: 30, Isolation: protocol.IsolationHAMiCore},
			{Vendor: "nvidia", MemoryMiB: 10240, ComputePercent: 50, Isolation: protocol.IsolationHAMiCore}},
			map[string]string{"CUDA_DEVICE_MEMORY_LIMIT": "10240m", "CUDA_DEVICE_SM_LIMIT": "30"}, ""},
		{"nvidia hami-core per device", []protocol.DeviceSlice{
			{Vendor: "nvidia", MemoryMiB: 1024, ComputePercent: 100}, {Vendor: "nvidia", MemoryMiB: 2048, ComputePercent: 100}},
			map[string]string{"CUDA_DEVICE_MEMORY_LIMIT_0": "1024m", "CUDA_DEVICE_MEMORY_LIMIT_1": "2048m"}, ""},
		{"nvidia mps", []protocol.DeviceSlice{
			{Vendor: "nvidia", MemoryMiB: 4096, ComputePercent: 25, Isolation: protocol.IsolationMPS},
			{Vendor: "nvidia", MemoryMiB: 2048, ComputePercent: 25, Isolation: protocol.IsolationMPS}},
			map[string]string{"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE": "25", "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT": "0=4096M,1=2048M"}, ""},
		{"amd", []protocol.DeviceSlice{{Vendor: "amd", MemoryMiB: 8000}},
			map[string]string{"HIP_DEVICE_MEMORY_LIMIT": "8000m"}, ""},
		{"amd uneven", []protocol.DeviceSlice{{Vendor: "amd", MemoryMiB: 8000}, {Vendor: "amd", MemoryMiB: 1}}, nil, "different memory"},
		// Cambricon's split counts whole GiB of one card (never above the slice).
		{"cambricon", []protocol.DeviceSlice{{Vendor: "cambricon", Index: 2, MemoryMiB: 4096}},
			map[string]string{"CAMBRICON_SPLIT_ENABLE": "1", "CAMBRICON_SPLIT_VISIBLE_DEVICES": "2", "CAMBRICON_SPLIT_MEMS": "4"}, ""},
		{"cambricon rounds down", []protocol.DeviceSlice{{Vendor: "cambricon", Index: 0, MemoryMiB: 3000}},
			map[string]string{"CAMBRICON_SPLIT_ENABLE": "1", "CAMBRICON_SPLIT_VISIBLE_DEVICES": "0", "CAMBRICON_SPLIT_MEMS": "2"}, ""},
		{"cambricon one card", []protocol.DeviceSlice{{Vendor: "cambricon", Index: 2, MemoryMiB: 4096}, {Vendor: "cambricon", Index: 3, MemoryMiB: 2048}},
			nil, "one card per task"},
		{"cambricon below a share", []protocol.DeviceSlice{{Vendor: "cambricon", Index: 2, MemoryMiB: 512}}, nil, "below one share"},
		{"mthreads has none", []protocol.DeviceSlice{{Vendor: "mthreads", MemoryMiB: 1024}}, nil, "no driver-level limits"},
		{"ascend has none", []protocol.DeviceSlice{{Vendor: "ascend", MemoryMiB: 1}}, nil, "no driver-level limits"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env, err := SilverEnv(tc.devices)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, env)
		})
	}
}
