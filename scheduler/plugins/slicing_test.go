package plugins

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/receivers/inventory"
	"github.com/heteroflow/heteroflow/scheduler/framework"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

// oneDeviceNode is a node with one device of vendor/model and memMiB, with
// the vendor catalog's isolation (MIG profiles, vNPU templates or none).
func oneDeviceNode(name, vendor, model_ string, memMiB int64) model.Node {
	return model.Node{Name: name, CPUMilli: 16000, MemoryMiB: 1 << 20, Devices: []model.Device{{Index: 0, Vendor: vendor,
		Model: model_, NUMA: -1, MemoryMiB: memMiB, Isolation: inventory.IsolationFor(vendor, model_)}}}
}

// placeFit places one slice of r on device 0 of node as model.FitDevice
// chooses it (profile, start slot), as the scheduler would.
func placeFit(t *testing.T, cl *model.Cluster, id, node string, r model.Request) model.Slice {
	t.Helper()
	r.ID, r.DeviceCount = id, 1
	require.NoError(t, r.Normalize())
	ni, err := cl.Node(node)
	require.NoError(t, err)
	s, ok := model.FitDevice(&ni.Node.Devices[0], &ni.Devices[0], &r, cl.RatioMilli())
	require.True(t, ok, "setup: %s must fit on %s", id, node)
	s.Device = 0
	require.NoError(t, cl.Assign(model.Placement{TaskID: id, Node: node, Slices: []model.Slice{s}}))
	return s
}

func fragWith(t *testing.T, cl *model.Cluster, slicing bool, specs []WorkloadSpec) *Fragmentation {
	t.Helper()
	args := framework.Args{}
	if slicing {
		args = mustArgs(t, "slicingRules: true")
	}
	p, err := NewFragmentation(args, &handle{cl: cl})
	require.NoError(t, err)
	f := p.(*Fragmentation)
	require.NoError(t, f.SetWorkload(specs))
	require.True(t, f.PreScore(context.Background(), &framework.Cycle{Cluster: cl}).IsSuccess())
	return f
}

var (
	mig3g40 = model.Request{QoS: model.QoSGold, ComputePercent: 42.8, MemoryMiB: 40960} // A100-80GB 3g.40gb
	mig1g10 = model.Request{QoS: model.QoSGold, ComputePercent: 14.2, MemoryMiB: 10240} // A100-80GB 1g.10gb
)

// A MIG GPU's left-over compute is fragmented exactly when no demanded
// profile has a free start slot, compute slices and memory for it.
func TestSlicingRulesMIG(t *testing.T) {
	t.Parallel()
	cl := newCluster(t,
		oneDeviceNode("full", inventory.VendorNVIDIA, "A100-SXM4-80GB", 81920),
		oneDeviceNode("half", inventory.VendorNVIDIA, "A100-SXM4-80GB", 81920))
	// full: 3g.40gb at slots 0-3 and 4-7 → 6 of 7 compute slices used,
	// free compute 1000 − 2·428 = 144 milli, no memory slice free.
	require.Equal(t, 0, placeFit(t, cl, "a", "full", mig3g40).Start)
	require.Equal(t, 4, placeFit(t, cl, "b", "full", mig3g40).Start)
	// half: one 3g.40gb at 0 → free 572 milli, slots 4-7 free.
	placeFit(t, cl, "c", "half", mig3g40)
	require.Equal(t, int32(144), cl.Nodes[0].Devices[0].FreeMilli)
	require.Equal(t, int32(572), cl.Nodes[1].Devices[0].FreeMilli)

	// The workload demands Gold 1g.10gb instances only.
	demand := []WorkloadSpec{{DeviceCount: 1, ComputeMilli: 142, MemoryMiB: 10240, QoS: model.QoSGold, Weight: 1}}
	sliced := fragWith(t, cl, true, demand)
	// full: 1 compute slice free but no memory slice → 1g.10gb cannot be
	// placed → all 144 free milli are fragmented.
	require.InDelta(t, 144, sliced.NodeFrag(cl.Nodes[0]), 1e-9)
	// half: 1g.10gb fits at slot 4 → the node hosts the demand, nothing is
	// fragmented.
	require.InDelta(t, 0, sliced.NodeFrag(cl.Nodes[1]), 1e-9)

	// FGD's rule sees a partitioned device as unusable whatever room it has.
	fgd := fragWith(t, cl, false, demand)
	require.InDelta(t, 144, fgd.NodeFrag(cl.Nodes[0]), 1e-9)
	require.InDelta(t, 572, fgd.NodeFrag(cl.Nodes[1]), 1e-9)

	// Pricing a second 3g.40gb on half (slot 4): afterwards 144 milli
	// free with no slot → F goes 0 → 144, Δ = +144 (FGD's rule: 572 →
	// 144, Δ = −428, it would call the placement a cure).
	r := mig3g40
	r.ID, r.DeviceCount = "d", 1
	c := cycle(t, cl, &r)
	var a framework.Assignment
	require.True(t, sliced.Assign(context.Background(), c, cl.Nodes[1], &a).IsSuccess())
	require.Equal(t, 4, a.Slices[0].Start)
	require.InDelta(t, 144, a.Cost, 1e-9)
	require.InDelta(t, -428, fgd.Delta(cl.Nodes[1], &r, a.Slices, cl.RatioMilli()), 1e-9)
	// The cached Δ is the F the node really has once placed.
	require.NoError(t, cl.Assign(model.Placement{TaskID: "d", Node: "half", Slices: a.Slices}))
	require.InDelta(t, 144, sliced.NodeFrag(cl.Nodes[1]), 1e-9)
}

// An Ascend chip's left-over AI cores count per demanded vNPU template.
func TestSlicingRulesVNPU(t *testing.T) {
	t.Parallel()
	cl := newCluster(t, oneDeviceNode("npu", inventory.VendorAscend, "910B2", 65536))
	// Three vir06_1c_16g (6 of 24 AI cores, 16 GiB each): 18 cores and
	// 48 GiB used, free compute 1000 − 3·250 = 250 milli (6 cores).
	vir06 := model.Request{QoS: model.QoSGold, ComputePercent: 25, MemoryMiB: 16384}
	for _, id := range []string{"a", "b", "c"} {
		require.Equal(t, "vir06_1c_16g", placeFit(t, cl, id, "npu", vir06).Profile)
	}
	require.Equal(t, int32(250), cl.Nodes[0].Devices[0].FreeMilli)
	// Demand: half vir12_3c_32g (12 cores, 32 GiB), half vir03_1c_8g
	// (3 cores, 8 GiB).
	demand := []WorkloadSpec{
		{DeviceCount: 1, ComputeMilli: 500, MemoryMiB: 32768, QoS: model.QoSGold, Weight: 0.5},
		{DeviceCount: 1, ComputeMilli: 125, MemoryMiB: 8192, QoS: model.QoSGold, Weight: 0.5},
	}
	// vir12: 18 + 12 > 24 cores → 250 fragmented × 0.5 = 125;
	// vir03: 18 + 3 ≤ 24 cores, 48 + 8 ≤ 64 GiB → fits, 0. F = 125.
	require.InDelta(t, 125, fragWith(t, cl, true, demand).NodeFrag(cl.Nodes[0]), 1e-9)
	// FGD's rule: 0.5·250 + 0.5·250.
	require.InDelta(t, 250, fragWith(t, cl, false, demand).NodeFrag(cl.Nodes[0]), 1e-9)
}

// On a vendor without partition tables a Gold task needs a whole free
// card: half a shared card is fragmented for it, though FGD's rule counts
// it usable.
func TestSlicingRulesWholeCardOnly(t *testing.T) {
	t.Parallel()
	cl := newCluster(t, oneDeviceNode("mlu", inventory.VendorCambricon, "MLU370-X8", 49152))
	placeFit(t, cl, "a", "mlu", model.Request{QoS: model.QoSBronze, ComputePercent: 50, MemoryMiB: 8192})
	demand := []WorkloadSpec{
		{DeviceCount: 1, ComputeMilli: 500, MemoryMiB: 8192, QoS: model.QoSGold, Weight: 0.5},
		{DeviceCount: 1, ComputeMilli: 500, MemoryMiB: 8192, QoS: model.QoSBronze, Weight: 0.5},
	}
	// Gold half card: no partition, shared card → 500 fragmented × 0.5;
	// Bronze half card: fits → 0. F = 250. FGD's rule: both fit, F = 0.
	require.InDelta(t, 250, fragWith(t, cl, true, demand).NodeFrag(cl.Nodes[0]), 1e-9)
	require.InDelta(t, 0, fragWith(t, cl, false, demand).NodeFrag(cl.Nodes[0]), 1e-9)
}

// BuildWorkloadByQoS splits one shape by tier; BuildWorkload (FGD) does not.
func TestBuildWorkloadByQoS(t *testing.T) {
	t.Parallel()
	mk := func(q model.QoS) model.Request {
		r := model.Request{ID: "x", DeviceCount: 1, ComputePercent: 50, MemoryMiB: 8192, QoS: q}
		require.NoError(t, r.Normalize())
		return r
	}
	reqs := []model.Request{mk(model.QoSGold), mk(model.QoSBronze), mk(model.QoSBronze)}
	fgd, err := BuildWorkload(reqs, 1)
	require.NoError(t, err)
	require.Len(t, fgd, 1)
	require.Empty(t, fgd[0].QoS)
	by, err := BuildWorkloadByQoS(reqs, 1)
	require.NoError(t, err)
	require.Len(t, by, 2)
	require.Equal(t, model.QoSBronze, by[0].QoS)
	require.InDelta(t, 2.0/3, by[0].Weight, 1e-12)
	require.Equal(t, model.QoSGold, by[1].QoS)
}

// The Silver/Bronze fast path of fragSpec.fits must say exactly what
// model.FitDevice says, on every vendor's devices and states.
func TestSharedFitsAgreesWithFitDevice(t *testing.T) {
	t.Parallel()
	devs := []model.Device{
		{Vendor: inventory.VendorNVIDIA, Model: "A100-SXM4-80GB", MemoryMiB: 81920},
		{Vendor: inventory.VendorNVIDIA, Model: "T4", MemoryMiB: 16384},
		{Vendor: inventory.VendorNVIDIA, Model: "V100", MemoryMiB: 32768, Isolation: inventory.Isolation{DriverLimits: "mps", Sharing: true}},
		{Vendor: inventory.VendorAscend, Model: "910B2", MemoryMiB: 65536},
		{Vendor: inventory.VendorCambricon, Model: "MLU370-X8", MemoryMiB: 49152},
		{Vendor: "biren", Model: "BR104", MemoryMiB: 32768},
		{Vendor: inventory.VendorNVIDIA, Model: "A100-SXM4-40GB", MemoryMiB: 40960, MIG: true},
	}
	for i := range devs {
		if devs[i].Isolation.DriverLimits == "" && !devs[i].Isolation.Sharing {
			devs[i].Isolation = inventory.IsolationFor(devs[i].Vendor, devs[i].Model)
		}
	}
	states := []model.DeviceState{
		{FreeMilli: 1000},
		{FreeMilli: 400, MemUsed: 12000, Mode: model.ModeShared, Slices: 2},
		{FreeMilli: 0, MemUsed: 16384, Mode: model.ModeExclusive, Slices: 1},
		{FreeMilli: 572, Mode: model.ModePartitioned, Slices: 1, PartMask: 0x0f, PartSlices: 3, PartMem: 40960},
	}
	for _, ratio := range []int64{1000, 1500} {
		for _, q := range []model.QoS{model.QoSSilver, model.QoSBronze} {
			for _, n := range []int{1, 2} {
				for _, milli := range []int32{0, 250, 400, 1000} {
					for _, mem := range []int64{0, 4096, 16384} {
						if milli == 0 && mem == 0 {
							continue
						}
						spec := WorkloadSpec{DeviceCount: n, ComputeMilli: milli, MemoryMiB: mem, QoS: q}
						fs := fragSpec{n: n, milli: milli, mem: mem}
						fs.applySlicing(spec, ratio)
						require.NotNil(t, fs.fit)
						for di := range devs {
							iso := nodeIsoSets(&model.Node{Devices: devs[di : di+1]})
							for si := range states {
								_, want := model.FitDevice(&devs[di], &states[si], fs.fit, ratio)
								require.Equal(t, want, fs.fits(&devs[di], &states[si], true, iso[fs.cls]&1 != 0, ratio),
									"%s %dx%d/%d MiB on %s state %d ratio %d", q, n, milli, mem, devs[di].Model, si, ratio)
							}
						}
					}
				}
			}
		}
	}
}
