package plugins

import (
	"context"
	"fmt"

	"github.com/heteroflow/heteroflow/scheduler/framework"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

var (
	reasonCPU     = framework.NewReason("insufficient cpu")
	reasonHostMem = framework.NewReason("insufficient host memory")
	reasonDevices = framework.NewReason("too few devices")
	reasonSlice   = framework.NewReason("no device has enough free memory/compute for the QoS tier")
)

// ResourceFit filters on host CPU and memory and, as an Assign plugin,
// picks devices whose free memory MiB and compute % fit one slice each
// (memory and device count are independent: brief §2). The per-device QoS
// rules are model.FitDevice's. Which fitting devices it takes is the
// strategy: binpack (tightest free compute first) or spread (emptiest).
type ResourceFit struct {
	strategy string
	cands    []cand
}

type resourceFitArgs struct {
	Strategy string `yaml:"strategy"`
}

var (
	_ framework.FilterPlugin = (*ResourceFit)(nil)
	_ framework.AssignPlugin = (*ResourceFit)(nil)
)

// NewResourceFit builds the plugin; strategy defaults to binpack.
func NewResourceFit(args framework.Args, _ framework.Handle) (framework.Plugin, error) {
	a := resourceFitArgs{Strategy: "binpack"}
	if err := args.Decode(&a); err != nil {
		return nil, err
	}
	if a.Strategy != "binpack" && a.Strategy != "spread" {
		return nil, fmt.Errorf("strategy must be binpack or spread, not %q", a.Strategy)
	}
	return &ResourceFit{strategy: a.Strategy}, nil
}

// Name implements framework.Plugin.
func (*ResourceFit) Name() string { return NameResourceFit }

// Filter checks host CPU, host memory and the raw device count.
func (*ResourceFit) Filter(_ context.Context, c *framework.Cycle, n *model.NodeInfo) framework.Status {
	r := c.Req
	switch {
	case n.FreeCPU < r.CPUMilli:
		return framework.Reject(reasonCPU)
	case n.FreeMem < r.HostMemoryMiB:
		return framework.Reject(reasonHostMem)
	case len(n.Devices) < r.DeviceCount:
		return framework.Never(reasonDevices)
	}
	return framework.OK
}

// Assign picks DeviceCount fitting devices by the strategy; multi-device
// sets prefer linked devices on one NUMA node (pickSet).
func (p *ResourceFit) Assign(_ context.Context, c *framework.Cycle, n *model.NodeInfo, out *framework.Assignment) framework.Status {
	r := c.Req
	if r.DeviceCount == 0 {
		return framework.OK
	}
	p.cands = fittingDevices(c, n, p.cands[:0])
	if len(p.cands) < r.DeviceCount {
		return framework.Reject(reasonSlice)
	}
	tight := p.strategy == "binpack"
	pickSet(n, p.cands, r.DeviceCount, tight, r.RDMA, out)
	return framework.OK
}

// cand is a device that can take one slice of the request.
type cand struct {
	dev   int
	free  int32
	slice model.Slice
}

// fittingDevices appends every device of n that takes one slice of c.Req.
func fittingDevices(c *framework.Cycle, n *model.NodeInfo, buf []cand) []cand {
	devs := n.Node.Devices
	ratio := c.Cluster.RatioMilli()
	for i := range devs {
		d := &devs[i]
		if !c.ModelAllowed[d.ModelID()] {
			continue
		}
		s, ok := model.FitDevice(d, &n.Devices[i], c.Req, ratio)
		if !ok {
			continue
		}
		s.Device = i
		buf = append(buf, cand{dev: i, free: n.Devices[i].FreeMilli, slice: s})
	}
	return buf
}
