package plugins

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/scheduler/framework"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

func TestResourceFit(t *testing.T) {
	t.Parallel()
	cl := newCluster(t, gpuNode("a", 8000, "T4", 2))
	place(t, cl, "x", "a", 2000, map[int]int32{0: 700})
	ni := cl.Nodes[0]
	p, err := NewResourceFit(framework.Args{}, nil)
	require.NoError(t, err)
	rf := p.(*ResourceFit)
	tests := []struct {
		name    string
		r       model.Request
		filter  framework.Code
		assign  framework.Code
		devices []int
	}{
		// 8000 − 2000 = 6000 free CPU < 7000.
		{"cpu short", model.Request{CPUMilli: 7000}, framework.Unschedulable, framework.Success, nil},
		{"three devices on a two-device node", model.Request{DeviceCount: 3, ComputePercent: 10}, framework.UnschedulableAndUnresolvable, framework.Unschedulable, nil},
		// 250 milli: device 0 has 300 free, device 1 has 1000: binpack → 0.
		{"binpack tightest", model.Request{DeviceCount: 1, ComputePercent: 25}, framework.Success, framework.Success, []int{0}},
		// 400 milli: device 0 has only 300 → device 1.
		{"skip full device", model.Request{DeviceCount: 1, ComputePercent: 40}, framework.Success, framework.Success, []int{1}},
		// Two slices of 30%: 300 ≤ 300 on device 0 and 1000 on device 1.
		{"two devices", model.Request{DeviceCount: 2, ComputePercent: 30}, framework.Success, framework.Success, []int{0, 1}},
		// Memory-only request: 0 compute, 1 GiB per device.
		{"memory decoupled from count", model.Request{DeviceCount: 2, MemoryMiB: 1024}, framework.Success, framework.Success, []int{0, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.r
			r.ID, r.QoS = "r", model.QoSSilver
			c := cycle(t, cl, &r)
			require.Equal(t, tt.filter, rf.Filter(context.Background(), c, ni).Code)
			var a framework.Assignment
			require.Equal(t, tt.assign, rf.Assign(context.Background(), c, ni, &a).Code)
			var got []int
			for _, s := range a.Slices {
				got = append(got, s.Device)
			}
			require.ElementsMatch(t, tt.devices, got)
		})
	}
	_, err = NewResourceFit(mustArgs(t, "strategy: tightest"), nil)
	require.Error(t, err)
}
