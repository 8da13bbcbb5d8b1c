package plugins

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/scheduler/framework"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

// TestGPUType: PreFilter refuses a request no model in the cluster can
// serve (unresolvable everywhere); Filter refuses nodes of other models.
func TestGPUType(t *testing.T) {
	t.Parallel()
	cl := newCluster(t, gpuNode("t4", 8000, "T4", 1), gpuNode("v100", 8000, "V100M32", 1))
	ctx := context.Background()
	tests := []struct {
		name          string
		r             model.Request
		pre, t4, v100 framework.Code
	}{
		{"any model", model.Request{DeviceCount: 1}, framework.Success, framework.Success, framework.Success},
		{"gpu_spec excludes T4", model.Request{DeviceCount: 1, Models: []string{"V100M16", "V100M32"}}, framework.Success, framework.UnschedulableAndUnresolvable, framework.Success},
		{"no such model", model.Request{DeviceCount: 1, Models: []string{"H100"}}, framework.UnschedulableAndUnresolvable, framework.UnschedulableAndUnresolvable, framework.UnschedulableAndUnresolvable},
		{"exclude, case-insensitive", model.Request{DeviceCount: 1, ExcludeModels: []string{"t4"}}, framework.Success, framework.UnschedulableAndUnresolvable, framework.Success},
		{"vendor", model.Request{DeviceCount: 1, Vendor: "amd"}, framework.UnschedulableAndUnresolvable, framework.UnschedulableAndUnresolvable, framework.UnschedulableAndUnresolvable},
		{"cpu only skips", model.Request{CPUMilli: 1}, framework.Skip, framework.Success, framework.Success},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.r
			r.ID, r.QoS = "r", model.QoSSilver
			c := cycle(t, cl, &r)
			require.Equal(t, tt.pre, GPUType{}.PreFilter(ctx, c).Code)
			require.Equal(t, tt.t4, GPUType{}.Filter(ctx, c, cl.Nodes[0]).Code)
			require.Equal(t, tt.v100, GPUType{}.Filter(ctx, c, cl.Nodes[1]).Code)
		})
	}
}
