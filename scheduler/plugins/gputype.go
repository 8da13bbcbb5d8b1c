package plugins

import (
	"context"

	"github.com/heteroflow/heteroflow/scheduler/framework"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

var (
	reasonNoModel   = framework.NewReason("no device of the requested vendor/model in the cluster")
	reasonWrongType = framework.NewReason("no device of the requested vendor/model on the node")
)

// GPUType applies the request's vendor and model include/exclude lists
// (the trace's gpu_spec) at node level; Assign plugins apply them per
// device through Cycle.ModelAllowed.
type GPUType struct{}

var (
	_ framework.PreFilterPlugin = GPUType{}
	_ framework.FilterPlugin    = GPUType{}
)

// NewGPUType builds the plugin (no args).
func NewGPUType(args framework.Args, _ framework.Handle) (framework.Plugin, error) {
	return GPUType{}, args.Decode(&struct{}{})
}

// Name implements framework.Plugin.
func (GPUType) Name() string { return NameGPUType }

// PreFilter refuses at once when no model in the cluster is admitted.
func (GPUType) PreFilter(_ context.Context, c *framework.Cycle) framework.Status {
	if c.Req.DeviceCount == 0 {
		return framework.Status{Code: framework.Skip}
	}
	for _, ok := range c.ModelAllowed {
		if ok {
			return framework.OK
		}
	}
	return framework.Never(reasonNoModel)
}

// Filter refuses nodes without an admitted device.
func (GPUType) Filter(_ context.Context, c *framework.Cycle, n *model.NodeInfo) framework.Status {
	if c.Req.DeviceCount == 0 {
		return framework.OK
	}
	devs := n.Node.Devices
	for i := range devs {
		if c.ModelAllowed[devs[i].ModelID()] {
			return framework.OK
		}
	}
	return framework.Never(reasonWrongType)
}
