package plugins

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/scheduler/framework"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

func TestBuildWorkload(t *testing.T) {
	t.Parallel()
	mk := func(cpu int64, n int, pct float64) model.Request {
		r := model.Request{ID: "x", CPUMilli: cpu, DeviceCount: n, ComputePercent: pct, QoS: model.QoSSilver}
		require.NoError(t, r.Normalize())
		return r
	}
	reqs := []model.Request{mk(1000, 1, 50), mk(1000, 1, 50), mk(1000, 1, 50), mk(2000, 1, 100), mk(4000, 0, 0)}
	// Shapes: 3× (1000,1,500), 1× (2000,1,1000), 1× cpu-only → weights 0.6, 0.2, 0.2.
	all, err := BuildWorkload(reqs, 1)
	require.NoError(t, err)
	require.Len(t, all, 3)
	require.Equal(t, int32(500), all[0].ComputeMilli)
	require.InDelta(t, 0.6, all[0].Weight, 1e-12)
	// 60% coverage keeps only the top shape (3 of 5 tasks).
	top, err := BuildWorkload(reqs, 0.6)
	require.NoError(t, err)
	require.Len(t, top, 1)
	_, err = BuildWorkload(reqs, 0)
	require.Error(t, err)
}

func TestFragmentationArithmetic(t *testing.T) {
	t.Parallel()
	cl := newCluster(t, gpuNode("a", 16000, "T4", 2), gpuNode("b", 16000, "T4", 2))
	// a: device 0 has 300 free (700 used), device 1 is free; CPU 8000 free.
	place(t, cl, "x", "a", 8000, map[int]int32{0: 700})
	h := &handle{cl: cl}
	p, err := NewFragmentation(framework.Args{}, h)
	require.NoError(t, err)
	f := p.(*Fragmentation)
	// M: 50% shape A (cpu 4000, 1×500 milli), 30% shape B (cpu 12000, 1×1000),
	// 20% CPU-only.
	require.NoError(t, f.SetWorkload([]WorkloadSpec{
		{CPUMilli: 4000, DeviceCount: 1, ComputeMilli: 500, Weight: 0.5},
		{CPUMilli: 12000, DeviceCount: 1, ComputeMilli: 1000, Weight: 0.3},
		{CPUMilli: 1000, Weight: 0.2},
	}))
	require.Equal(t, 1, h.invalidated)
	r := &model.Request{ID: "r", DeviceCount: 1, ComputePercent: 30, CPUMilli: 2000, QoS: model.QoSSilver}
	c := cycle(t, cl, r)
	require.True(t, f.PreScore(context.Background(), c).IsSuccess())
	// Node a (free 300 + 1000 = 1300, CPU 8000):
	//   A: hostable (device 1 ≥ 500) → fragment = device 0's 300 → 0.5·300 = 150
	//   B: CPU 8000 < 12000 → all 1300 → 0.3·1300 = 390
	//   CPU-only: all 1300 → 0.2·1300 = 260;  F_a = 800.
	require.InDelta(t, 800, f.NodeFrag(cl.Nodes[0]), 1e-9)
	// Node b (2000 free, CPU 16000): A → 0, B → 0, CPU-only → 0.2·2000 = 400.
	require.InDelta(t, 400, f.NodeFrag(cl.Nodes[1]), 1e-9)
	// Assign on a: 300 milli + 2000 CPU. Device 0 → free 0 & 1000, CPU 6000:
	//   A: 0, B: 0.3·1000 = 300, CPU-only: 200 → 500, Δ = −300.
	// Device 1 → 300 & 700, CPU 6000: A: device 1 (700) hosts, frag 300 → 150;
	//   B: 300; CPU-only: 200 → 650, Δ = −150. Device 0 wins.
	var a framework.Assignment
	require.True(t, f.Assign(context.Background(), c, cl.Nodes[0], &a).IsSuccess())
	require.Equal(t, 0, a.Slices[0].Device)
	require.InDelta(t, -300, a.Cost, 1e-9)
	// Score = 50 − 50·(−300)/2000 = 57.5 (scale: largest node, 2 devices).
	s, _ := f.Score(context.Background(), c, cl.Nodes[0], &a)
	require.InDelta(t, 57.5, s, 1e-9)
	// Score without the Assign plugin's cost recomputes the same Δ.
	a.CostBy = ""
	s2, _ := f.Score(context.Background(), c, cl.Nodes[0], &a)
	require.InDelta(t, s, s2, 1e-9)
	// Node b: either device → 700 & 1000, CPU 14000: A 0 (both ≥ 500);
	// B hostable on the whole device, the 700 one is fragment → 0.3·700 =
	// 210; CPU-only 0.2·1700 = 340 → 550, Δ = 550 − 400 = +150. Placing
	// there would fragment, placing on a shrinks fragmentation: a wins.
	a.Reset()
	require.True(t, f.Assign(context.Background(), c, cl.Nodes[1], &a).IsSuccess())
	require.InDelta(t, 150, a.Cost, 1e-9)
	require.Error(t, f.SetWorkload([]WorkloadSpec{{ComputeMilli: 2000}}))
	_, err = NewFragmentation(mustArgs(t, "coverage: 1.5"), h)
	require.Error(t, err)
}

// TestFragmentationHostAware checks the host-memory rules of hostAware
// (specF) against FGD's rule, on one node with two free T4s (2000 milli).
func TestFragmentationHostAware(t *testing.T) {
	t.Parallel()
	const gib = 1024
	shared := WorkloadSpec{CPUMilli: 1000, DeviceCount: 1, ComputeMilli: 470, HostMemoryMiB: 100 * gib, Weight: 1}
	whole := WorkloadSpec{CPUMilli: 1000, DeviceCount: 1, ComputeMilli: 1000, HostMemoryMiB: 100 * gib, Weight: 1}
	tests := []struct {
		name      string
		spec      WorkloadSpec
		hostMiB   int64
		fgd, host float64
	}{
		// 470-milli slices: 2 per device → g = 4; 250 GiB feeds h = 2
		// instances → (4−2)/4 of the 2000 usable milli = 1000. FGD: 0.
		{"shared, memory for half the slices", shared, 250 * gib, 0, 1000},
		// 500 GiB → h = 5 ≥ g = 4: nothing stranded.
		{"shared, memory for all slices", shared, 500 * gib, 0, 0},
		// 50 GiB < 100 GiB: the node cannot host one instance → all 2000.
		{"shared, memory for none", shared, 50 * gib, 0, 2000},
		// Whole-device shapes get the one-instance rule only: h = 2 ≥ 1.
		{"whole, memory for one", whole, 150 * gib, 0, 0},
		{"whole, memory for none", whole, 50 * gib, 0, 2000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nd := gpuNode("a", 32000, "T4", 2)
			nd.MemoryMiB = tt.hostMiB
			cl := newCluster(t, nd)
			for _, aware := range []bool{false, true} {
				h := &handle{cl: cl}
				args := framework.Args{}
				if aware {
					args = mustArgs(t, "hostAware: true")
				}
				p, err := NewFragmentation(args, h)
				require.NoError(t, err)
				f := p.(*Fragmentation)
				require.NoError(t, f.SetWorkload([]WorkloadSpec{tt.spec}))
				r := &model.Request{ID: "r", DeviceCount: 1, ComputePercent: 10, CPUMilli: 1000, QoS: model.QoSSilver}
				require.True(t, f.PreScore(context.Background(), cycle(t, cl, r)).IsSuccess())
				want := tt.fgd
				if aware {
					want = tt.host
				}
				require.InDelta(t, want, f.NodeFrag(cl.Nodes[0]), 1e-9, "hostAware=%v", aware)
			}
		})
	}
	// Δ of placing one 470-milli task with 100 GiB on the 250 GiB node:
	// after, devices 530 and 1000 → g = 1+2 = 3, 150 GiB → h = 1, so
	// F = 1530·(3−1)/3 = 1020 against 1000 before: Δ = +20.
	nd := gpuNode("a", 32000, "T4", 2)
	nd.MemoryMiB = 250 * gib
	cl := newCluster(t, nd)
	h := &handle{cl: cl}
	p, err := NewFragmentation(mustArgs(t, "hostAware: true"), h)
	require.NoError(t, err)
	f := p.(*Fragmentation)
	require.NoError(t, f.SetWorkload([]WorkloadSpec{shared}))
	r := &model.Request{ID: "r", DeviceCount: 1, ComputePercent: 47, CPUMilli: 1000, HostMemoryMiB: 100 * gib, QoS: model.QoSSilver}
	c := cycle(t, cl, r)
	require.True(t, f.PreScore(context.Background(), c).IsSuccess())
	var a framework.Assignment
	require.True(t, f.Assign(context.Background(), c, cl.Nodes[0], &a).IsSuccess())
	require.InDelta(t, 20, a.Cost, 1e-9)
}

func TestBuildWorkloadHostMemoryMean(t *testing.T) {
	t.Parallel()
	mk := func(mem int64) model.Request {
		r := model.Request{ID: "x", CPUMilli: 1000, DeviceCount: 1, ComputePercent: 50, HostMemoryMiB: mem, QoS: model.QoSSilver}
		require.NoError(t, r.Normalize())
		return r
	}
	// Host memory is not in the shape key (FGD's M is unchanged): one shape,
	// mean (1000+2000+6000)/3 = 3000 MiB.
	all, err := BuildWorkload([]model.Request{mk(1000), mk(2000), mk(6000)}, 1)
	require.NoError(t, err)
	require.Len(t, all, 1)
	require.Equal(t, int64(3000), all[0].HostMemoryMiB)
}

// TestTemperByDemand: weight ∝ count × d^exp, renormalised; CPU-only
// shapes keep their raw weight before renormalising.
func TestTemperByDemand(t *testing.T) {
	t.Parallel()
	specs := []WorkloadSpec{
		{DeviceCount: 8, ComputeMilli: 1000, Weight: 0.4}, // d = 8
		{DeviceCount: 1, ComputeMilli: 160, Weight: 0.4},  // d = 0.16
		{CPUMilli: 4000, Weight: 0.2},                     // CPU-only: ×1
	}
	temperByDemand(specs, -0.3)
	// 0.4·8^−0.3 = 0.21435, 0.4·0.16^−0.3 = 0.69305, 0.2 → sum 1.10740.
	require.InDelta(t, 0.21435/1.10740, specs[0].Weight, 1e-4)
	require.InDelta(t, 0.69305/1.10740, specs[1].Weight, 1e-4)
	require.InDelta(t, 0.2/1.10740, specs[2].Weight, 1e-4)
	// Exponent 0 is FGD's popularity, untouched.
	same := []WorkloadSpec{{DeviceCount: 8, ComputeMilli: 1000, Weight: 0.7}, {DeviceCount: 1, ComputeMilli: 500, Weight: 0.3}}
	temperByDemand(same, 0)
	require.Equal(t, 0.7, same[0].Weight)
	// Out-of-range exponents are refused at load.
	args, err := framework.ArgsFromYAML("demandExponent: -3")
	require.NoError(t, err)
	_, err = NewFragmentation(args, nil)
	require.ErrorContains(t, err, "demandExponent")
}
