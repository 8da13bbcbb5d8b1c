package scheduling

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// TestLiveFragmentationFollowsWorkload: the same one-device task lands on
// different nodes depending on what the cluster has been running. After
// 2-device tasks, it goes to the 8-device node (taking a device of the
// 2-device node would leave it unable to host the next 2-device task);
// after 8-device tasks, it goes to the 2-device node (keeping the 8-device
// node whole). Without Fragmentation the other plugins tie on both nodes.
func TestLiveFragmentationFollowsWorkload(t *testing.T) {
	for _, tt := range []struct {
		name    string
		history int // device count of the tasks run before
		want    string
	}{
		{"after 2-device tasks", 2, "eight"},
		{"after 8-device tasks", 8, "pair"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, Config{})
			h.addNode("eight", inventory.VendorNVIDIA, "A100-SXM4-80GB", 8, 81920)
			h.addNode("pair", inventory.VendorNVIDIA, "A100-SXM4-80GB", 2, 81920)
			var past []*controlplane.Task
			for i := 0; i < 3; i++ {
				past = append(past, h.submit(controlplane.TaskSpec{Name: "past", DeviceCount: tt.history,
					ComputePercent: 100, QoS: controlplane.QoSSilver, Labels: map[string]string{"duration": "1"}}))
			}
			for i := 0; i < 30 && !allEnded(h, past); i++ {
				h.step()
			}
			require.True(t, allEnded(h, past), "history tasks must finish first")
			require.Len(t, h.svc.shapes.reqs, 3)

			one := h.submit(controlplane.TaskSpec{Name: "one", DeviceCount: 1, ComputePercent: 100, QoS: controlplane.QoSSilver})
			h.step()
			require.Equal(t, tt.want, h.task(one.ID).NodeID)
		})
	}
}
