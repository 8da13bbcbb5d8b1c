package daemon

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/agent/protocol"
)

// TestSimulatedLoadPerPartition: tasks inside MIG instances load their GPU
// and, separately, their own instance (by its GPU instance id), so the
// simulated nvidia-smi reports per-instance memory as the real one does.
func TestSimulatedLoadPerPartition(t *testing.T) {
	t.Parallel()
	var got map[int]DeviceLoad
	a := &Agent{cfg: Config{SimulatedLoad: func(m map[int]DeviceLoad) error { got = m; return nil }},
		tasks: map[string]*task{
			"1/0": {spec: protocol.TaskSpec{Devices: []protocol.DeviceSlice{{Index: 0, PartitionID: "1", MemoryMiB: 4096, ComputePercent: 42}}}},
			"2/0": {spec: protocol.TaskSpec{Devices: []protocol.DeviceSlice{{Index: 0, PartitionID: "2", MemoryMiB: 1024, ComputePercent: 14}}}},
			"3/0": {spec: protocol.TaskSpec{Devices: []protocol.DeviceSlice{{Index: 1, MemoryMiB: 2048, ComputePercent: 50}}}},
		}}
	a.simulateLoad()
	require.Equal(t, map[int]DeviceLoad{
		0: {UtilizationPercent: 56, MemoryUsedMiB: 5120, PartitionMemoryMiB: map[string]int64{"1": 4096, "2": 1024}},
		1: {UtilizationPercent: 50, MemoryUsedMiB: 2048},
	}, got)
}
