package plugins

import (
	"math"

	"github.com/heteroflow/heteroflow/scheduler/model"
)

// This file is Fragmentation's dead-space term. FGD's measure counts a
// partly used device's free compute as a fragment only for the shapes too
// big for it, so a gap that some shape still fits looks usable however
// rare that shape is. On the openb traces that is where fragmentation at
// 90 % arrived comes from: almost all of it sits in gaps on partly used
// devices (docs/BENCHMARKS.md), and a 320-milli task put on a 530-milli
// gap (210 left, a gap only the rare ≤ 210-milli tasks fit) looked as good
// as a 470-milli one there (60 left). The dead space of a gap is what no
// sum of the workload's common one-device sizes fills: with sizes 1000,
// 470 and 320, dead(530) = 60 (one 470), dead(680) = 40 (two 320s),
// dead(210) = 210 — so the 320 goes to the 680 gap.

// defaultFillerShare: a one-device size is a filler when at least 1.5 % of
// the target workload asks for it.
const defaultFillerShare = 0.015

// deadSpaceTable returns dead[g] for g = 0..1000 milli: g minus the largest
// sum of filler sizes (one-device shapes whose compute is asked for by at
// least share of the workload's weight) that is ≤ g — an unbounded
// knapsack over at most a handful of sizes.
func deadSpaceTable(specs []WorkloadSpec, share float64) []int64 {
	bySize := map[int32]float64{}
	for _, s := range specs {
		if s.DeviceCount == 1 && s.ComputeMilli > 0 {
			bySize[s.ComputeMilli] += s.Weight
		}
	}
	var sizes []int
	for milli, w := range bySize {
		if w >= share-1e-12 {
			sizes = append(sizes, int(milli))
		}
	}
	fill := make([]int, model.WholeMilli+1)
	for g := 1; g <= model.WholeMilli; g++ {
		fill[g] = fill[g-1]
		for _, m := range sizes {
			if m <= g {
				fill[g] = max(fill[g], fill[g-m]+m)
			}
		}
	}
	dead := make([]int64, model.WholeMilli+1)
	for g := range dead {
		dead[g] = int64(g - fill[g])
	}
	return dead
}

// deadDelta is the dead-space term of placing slices on n, in the units of
// deltaLocked (weight × milli): deadWeight × Σ (dead after − dead before)
// over the devices the slices take.
func (p *Fragmentation) deadDelta(n *model.NodeInfo, slices []model.Slice) int64 {
	if p.dead == nil || len(slices) == 0 {
		return 0
	}
	var d int64
	for i := range slices {
		free := n.Devices[slices[i].Device].FreeMilli
		d += p.deadOf(free-slices[i].ComputeMilli) - p.deadOf(free)
	}
	return int64(math.Round(p.deadWeight * float64(d) * weightScale))
}

func (p *Fragmentation) deadOf(free int32) int64 {
	return p.dead[min(max(free, 0), model.WholeMilli)]
}
