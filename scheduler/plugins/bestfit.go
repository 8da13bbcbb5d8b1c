package plugins

import (
	"context"

	"github.com/heteroflow/heteroflow/scheduler/framework"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

// BestFit is the FGD paper's best-fit baseline as REFERENCE.md pins it
// down: minimise 0.5·(free CPU − request)/maxCPU + 0.5·(free device milli −
// request)/maxMilli, with maxCPU and maxMilli the cluster-wide maxima (the
// largest node's). Normalising by the cluster maxima, not each node's own
// capacity, is what reproduces the published figure.
type BestFit struct {
	epoch           uint64
	maxCPU, maxMili float64
}

var (
	_ framework.PreScorePlugin = (*BestFit)(nil)
	_ framework.ScorePlugin    = (*BestFit)(nil)
)

// NewBestFit builds the plugin (no args).
func NewBestFit(args framework.Args, _ framework.Handle) (framework.Plugin, error) {
	return &BestFit{}, args.Decode(&struct{}{})
}

// Name implements framework.Plugin.
func (*BestFit) Name() string { return NameBestFit }

// PreScore refreshes the cluster maxima when nodes joined.
func (p *BestFit) PreScore(_ context.Context, c *framework.Cycle) framework.Status {
	if p.epoch == c.Cluster.Epoch {
		return framework.OK
	}
	p.epoch, p.maxCPU, p.maxMili = c.Cluster.Epoch, 1, 1
	for _, n := range c.Cluster.Nodes {
		p.maxCPU = max(p.maxCPU, float64(n.Node.CPUMilli))
		p.maxMili = max(p.maxMili, float64(len(n.Devices)*model.WholeMilli))
	}
	return framework.OK
}

// Score = 100 × (1 − leftover). Example: maxCPU 128000, maxMilli 8000;
// node with 32000 CPU and 1500 milli free, task 8000 CPU and 500 milli:
// leftover = 0.5·24000/128000 + 0.5·1000/8000 = 0.09375 + 0.0625 → 84.375.
func (p *BestFit) Score(_ context.Context, c *framework.Cycle, n *model.NodeInfo, a *framework.Assignment) (float64, framework.Status) {
	var placed int64
	for i := range a.Slices {
		placed += int64(a.Slices[i].ComputeMilli)
	}
	left := 0.5*float64(n.FreeCPU-c.Req.CPUMilli)/p.maxCPU + 0.5*float64(n.FreeMilli-placed)/p.maxMili
	return 100 * (1 - left), framework.OK
}
