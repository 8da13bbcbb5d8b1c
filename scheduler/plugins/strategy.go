package plugins

import (
	"context"
	"fmt"

	"github.com/heteroflow/heteroflow/scheduler/framework"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

// allocStrategies is the strategy table (kube's least/most allocated): a
// pure function of used and capacity after the placement, in [0, 1].
var allocStrategies = map[string]func(used, capacity float64) float64{
	"most":  func(u, c float64) float64 { return u / c },   // BinPack
	"least": func(u, c float64) float64 { return 1 - u/c }, // Spread
}

// Allocation levels: node (device compute and CPU of the whole node) or
// device (the chosen devices only).
const (
	levelNode   = "node"
	levelDevice = "device"
)

// Allocation is BinPack or Spread, at node or device level.
type Allocation struct {
	name  string
	level string
	fn    func(used, capacity float64) float64
}

var _ framework.ScorePlugin = (*Allocation)(nil)

type allocationArgs struct {
	Level string `yaml:"level"`
}

// NewBinPack favours the most allocated node/devices after placement.
func NewBinPack(args framework.Args, _ framework.Handle) (framework.Plugin, error) {
	return newAllocation(NameBinPack, "most", args)
}

// NewSpread favours the least allocated node/devices after placement.
func NewSpread(args framework.Args, _ framework.Handle) (framework.Plugin, error) {
	return newAllocation(NameSpread, "least", args)
}

func newAllocation(name, strategy string, args framework.Args) (framework.Plugin, error) {
	a := allocationArgs{Level: levelNode}
	if err := args.Decode(&a); err != nil {
		return nil, err
	}
	if a.Level != levelNode && a.Level != levelDevice {
		return nil, fmt.Errorf("level must be %q or %q, not %q", levelNode, levelDevice, a.Level)
	}
	return &Allocation{name: name, level: a.Level, fn: allocStrategies[strategy]}, nil
}

// Name implements framework.Plugin.
func (p *Allocation) Name() string { return p.name }

// Score implements framework.ScorePlugin.
func (p *Allocation) Score(_ context.Context, c *framework.Cycle, n *model.NodeInfo, a *framework.Assignment) (float64, framework.Status) {
	if p.level == levelDevice {
		return 100 * deviceAllocation(n, a, p.fn), framework.OK
	}
	return 100 * nodeAllocation(n, c.Req, a, p.fn), framework.OK
}

// nodeAllocation averages the strategy over device compute and CPU, after
// the placement. Example: 8 devices with 3000 milli free, a 500 milli task,
// CPU 96000 of which 16000 free, task 8000: device used = (8000−3000+500)/8000
// = 0.6875, cpu used = (80000+8000)/96000 = 0.9167, "most" → 0.8021.
func nodeAllocation(n *model.NodeInfo, r *model.Request, a *framework.Assignment, fn func(u, c float64) float64) float64 {
	var placed int64
	for i := range a.Slices {
		placed += int64(a.Slices[i].ComputeMilli)
	}
	sum, parts := 0.0, 0.0
	if capMilli := float64(len(n.Devices) * model.WholeMilli); capMilli > 0 {
		sum += fn(capMilli-float64(n.FreeMilli-placed), capMilli)
		parts++
	}
	if capCPU := float64(n.Node.CPUMilli); capCPU > 0 {
		sum += fn(capCPU-float64(n.FreeCPU-r.CPUMilli), capCPU)
		parts++
	}
	if parts == 0 {
		return 0
	}
	return sum / parts
}

// deviceAllocation averages the strategy over the chosen devices.
// Example: one device with 400 free, a 300 milli slice: used after = 900/1000.
func deviceAllocation(n *model.NodeInfo, a *framework.Assignment, fn func(u, c float64) float64) float64 {
	if len(a.Slices) == 0 {
		return fn(0, 1)
	}
	sum := 0.0
	for i := range a.Slices {
		s := &a.Slices[i]
		used := float64(model.WholeMilli - n.Devices[s.Device].FreeMilli + s.ComputeMilli)
		sum += fn(used, model.WholeMilli)
	}
	return sum / float64(len(a.Slices))
}
