package scheduling

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

func nodeOf(name, vendor, mdl string, n int, mem int64) *model.NodeInfo {
	node := &model.Node{Name: name}
	for i := 0; i < n; i++ {
		node.Devices = append(node.Devices, model.Device{Index: i, Vendor: vendor, Model: mdl, MemoryMiB: mem})
	}
	return &model.NodeInfo{Node: node}
}

// "Never fits" is judged on capacity, not on use: 9 devices when the
// largest node has 8, or more memory per device than any card has.
func TestNeverFits(t *testing.T) {
	cluster := []*model.NodeInfo{
		nodeOf("h100", "nvidia", "NVIDIA H100 80GB HBM3", 8, 81559),
		nodeOf("ascend", "ascend", "910B3", 8, 65536),
	}
	spec := func(devices, mem int, vendor string, models ...string) controlplane.TaskSpec {
		return controlplane.TaskSpec{DeviceCount: devices, MemoryMiB: mem, Vendor: vendor, Models: models}
	}
	for _, tc := range []struct {
		name string
		spec controlplane.TaskSpec
		want string
	}{
		{"fits", spec(8, 60000, ""), ""},
		{"cpu only", spec(0, 0, ""), ""},
		{"nine devices", spec(9, 0, ""), "largest node has 8"},
		{"too much memory", spec(1, 90000, ""), "largest of the cluster's devices has 81559 MiB"},
		{"vendor memory", spec(1, 70000, "ascend"), "ascend devices has 65536 MiB"},
		{"absent vendor", spec(1, 0, "amd"), "no node in the cluster has amd devices"},
		{"unknown model left to GPUType", spec(1, 0, "", "MI300X"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := neverFits(cluster, tc.spec)
			if tc.want == "" {
				require.Empty(t, got)
				return
			}
			require.Contains(t, got, tc.want)
		})
	}
	require.Empty(t, neverFits(nil, spec(9, 0, "")), "an empty cluster waits for its first nodes")
}
