package plugins

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/receivers/inventory"
	"github.com/heteroflow/heteroflow/scheduler/framework"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

// handle is a minimal framework.Handle for plugin unit tests.
type handle struct {
	cl          *model.Cluster
	invalidated int
}

func (h *handle) Cluster() *model.Cluster { return h.cl }
func (*handle) Logger() *slog.Logger      { return slog.New(slog.DiscardHandler) }
func (h *handle) Invalidate()             { h.invalidated++ }

func gpuNode(name string, cpu int64, model_ string, n int) model.Node {
	nd := model.Node{Name: name, CPUMilli: cpu, MemoryMiB: 1 << 20}
	for i := 0; i < n; i++ {
		nd.Devices = append(nd.Devices, model.Device{Index: i, Vendor: inventory.VendorNVIDIA, Model: model_, NUMA: -1,
			MemoryMiB: 16384, Isolation: model.IsolationFor(inventory.VendorNVIDIA, model_)})
	}
	return nd
}

func newCluster(t *testing.T, nodes ...model.Node) *model.Cluster {
	t.Helper()
	cl, err := model.NewCluster(1)
	require.NoError(t, err)
	for _, n := range nodes {
		_, err := cl.AddNode(n)
		require.NoError(t, err)
	}
	return cl
}

// cycle builds a framework.Cycle the way the framework does.
func cycle(t *testing.T, cl *model.Cluster, r *model.Request) *framework.Cycle {
	t.Helper()
	require.NoError(t, r.Normalize())
	c := &framework.Cycle{Req: r, Cluster: cl}
	for _, m := range cl.Models() {
		c.ModelAllowed = append(c.ModelAllowed, r.ModelAllowed(m.Vendor, m.Model))
	}
	return c
}

// place puts a silver slice of milli on device d of node n (test setup).
func place(t *testing.T, cl *model.Cluster, id, node string, cpu int64, milli map[int]int32) {
	t.Helper()
	p := model.Placement{TaskID: id, Node: node, CPUMilli: cpu}
	for d, m := range milli {
		p.Slices = append(p.Slices, model.Slice{Device: d, QoS: model.QoSSilver, ComputeMilli: m, Start: -1})
	}
	require.NoError(t, cl.Assign(p))
}

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

func mustArgs(t *testing.T, y string) framework.Args {
	t.Helper()
	a, err := framework.ArgsFromYAML(y)
	require.NoError(t, err)
	return a
}

func TestGPUTypeAndRDMA(t *testing.T) {
	t.Parallel()
	fab := gpuNode("ib", 8000, "V100M32", 1)
	fab.RDMA = model.RDMAInfiniBand
	cl := newCluster(t, gpuNode("t4", 8000, "T4", 1), fab)
	ctx := context.Background()
	tests := []struct {
		name       string
		r          model.Request
		pre        framework.Code
		gpuT4      framework.Code
		rdmaT4     framework.Code
		rdmaScoreA float64 // on t4 (no fabric)
		rdmaScoreB float64 // on ib
	}{
		{"any model", model.Request{DeviceCount: 1}, framework.Success, framework.Success, framework.Success, 100, 0},
		{"gpu_spec excludes T4", model.Request{DeviceCount: 1, Models: []string{"V100M16", "V100M32"}}, framework.Success, framework.UnschedulableAndUnresolvable, framework.Success, 100, 0},
		{"no such model", model.Request{DeviceCount: 1, Models: []string{"H100"}}, framework.UnschedulableAndUnresolvable, framework.UnschedulableAndUnresolvable, framework.Success, 100, 0},
		{"exclude", model.Request{DeviceCount: 1, ExcludeModels: []string{"t4"}}, framework.Success, framework.UnschedulableAndUnresolvable, framework.Success, 100, 0},
		{"vendor", model.Request{DeviceCount: 1, Vendor: "amd"}, framework.UnschedulableAndUnresolvable, framework.UnschedulableAndUnresolvable, framework.Success, 100, 0},
		{"rdma wanted", model.Request{DeviceCount: 1, RDMA: true}, framework.Success, framework.Success, framework.UnschedulableAndUnresolvable, 100, 100},
		{"cpu only skips", model.Request{CPUMilli: 1}, framework.Skip, framework.Success, framework.Success, 100, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.r
			r.ID, r.QoS = "r", model.QoSSilver
			c := cycle(t, cl, &r)
			require.Equal(t, tt.pre, GPUType{}.PreFilter(ctx, c).Code)
			require.Equal(t, tt.gpuT4, GPUType{}.Filter(ctx, c, cl.Nodes[0]).Code)
			require.Equal(t, tt.rdmaT4, RDMA{}.Filter(ctx, c, cl.Nodes[0]).Code)
			a, _ := RDMA{}.Score(ctx, c, cl.Nodes[0], nil)
			b, _ := RDMA{}.Score(ctx, c, cl.Nodes[1], nil)
			require.Equal(t, tt.rdmaScoreA, a)
			require.Equal(t, tt.rdmaScoreB, b)
		})
	}
}

func TestAllocationStrategies(t *testing.T) {
	t.Parallel()
	cl := newCluster(t, gpuNode("a", 96000, "G2", 8))
	// Node: 8 devices, 5000 milli placed (3000 free): five whole devices.
	place(t, cl, "x", "a", 80000, map[int]int32{0: 1000, 1: 1000, 2: 1000, 3: 1000, 4: 1000})
	ni := cl.Nodes[0]
	r := &model.Request{ID: "r", DeviceCount: 1, ComputePercent: 50, CPUMilli: 8000, QoS: model.QoSSilver}
	c := cycle(t, cl, r)
	a := &framework.Assignment{Slices: []model.Slice{{Device: 5, ComputeMilli: 500}}}
	bp, _ := NewBinPack(framework.Args{}, nil)
	sp, _ := NewSpread(framework.Args{}, nil)
	bpd, _ := NewBinPack(mustArgs(t, "level: device"), nil)
	_, err := NewSpread(mustArgs(t, "level: rack"), nil)
	require.Error(t, err)
	tests := []struct {
		name string
		p    framework.ScorePlugin
		want float64
	}{
		// device used after = (8000−3000+500)/8000 = 0.6875; cpu used after =
		// (80000+8000)/96000 = 0.916667; mean 0.802083 → 80.2083.
		{"binpack node", bp.(framework.ScorePlugin), 100 * (0.6875 + 88000.0/96000) / 2},
		{"spread node", sp.(framework.ScorePlugin), 100 - 100*(0.6875+88000.0/96000)/2},
		// device 5: used after = (1000−1000+500)/1000 = 0.5 → 50.
		{"binpack device", bpd.(framework.ScorePlugin), 50},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, st := tt.p.Score(context.Background(), c, ni, a)
			require.True(t, st.IsSuccess())
			require.InDelta(t, tt.want, got, 1e-9)
		})
	}
}

func TestBestFitFormula(t *testing.T) {
	t.Parallel()
	cl := newCluster(t, gpuNode("big", 128000, "G2", 8), gpuNode("small", 32000, "T4", 2))
	place(t, cl, "x", "small", 0, map[int]int32{0: 500})
	p, _ := NewBestFit(framework.Args{}, nil)
	bf := p.(*BestFit)
	r := &model.Request{ID: "r", DeviceCount: 1, ComputePercent: 50, CPUMilli: 8000, QoS: model.QoSSilver}
	c := cycle(t, cl, r)
	require.True(t, bf.PreScore(context.Background(), c).IsSuccess())
	a := &framework.Assignment{Slices: []model.Slice{{Device: 0, ComputeMilli: 500}}}
	// maxCPU 128000, maxMilli 8000. small: free CPU 32000, free milli 1500:
	// leftover = 0.5·(32000−8000)/128000 + 0.5·(1500−500)/8000 = 0.09375 + 0.0625.
	got, _ := bf.Score(context.Background(), c, cl.Nodes[1], a)
	require.InDelta(t, 100*(1-0.15625), got, 1e-9)
	// big: 0.5·120000/128000 + 0.5·7500/8000 = 0.46875 + 0.46875 → 6.25.
	got, _ = bf.Score(context.Background(), c, cl.Nodes[0], a)
	require.InDelta(t, 6.25, got, 1e-9)
}

func TestTopology(t *testing.T) {
	t.Parallel()
	n := gpuNode("a", 64000, "A100-SXM4-80GB", 4)
	// 0–1 and 2–3 NVLink pairs; NUMA 0 = {0,1}, NUMA 1 = {2,3}; 1–2 PCIe PXB.
	link := func(peer int, ty inventory.LinkType) []inventory.Link {
		return []inventory.Link{{Peer: peer, Type: ty}}
	}
	n.Devices[0].Links, n.Devices[0].NUMA = link(1, inventory.LinkNVLink), 0
	n.Devices[1].Links, n.Devices[1].NUMA = append(link(0, inventory.LinkNVLink), inventory.Link{Peer: 2, Type: inventory.LinkPXB}), 0
	n.Devices[2].Links, n.Devices[2].NUMA = append(link(3, inventory.LinkNVLink), inventory.Link{Peer: 1, Type: inventory.LinkPXB}), 1
	n.Devices[3].Links, n.Devices[3].NUMA = link(2, inventory.LinkNVLink), 1
	cl := newCluster(t, n)
	ni := cl.Nodes[0]
	sl := func(ds ...int) []model.Slice {
		var out []model.Slice
		for _, d := range ds {
			out = append(out, model.Slice{Device: d})
		}
		return out
	}
	// {0,1}: NVLink (1.0), same NUMA → 100·(0.6·1 + 0.4) = 100.
	require.InDelta(t, 100, topologyScore(ni.Node, sl(0, 1)), 1e-9)
	// {1,2}: PXB (0.4), two NUMA nodes → 100·0.6·0.4 = 24.
	require.InDelta(t, 24, topologyScore(ni.Node, sl(1, 2)), 1e-9)
	require.InDelta(t, 100, topologyScore(ni.Node, sl(3)), 1e-9)
	// pickSet: device 0 is busiest (tightest) → seed 0, partner 1 (NVLink).
	place(t, cl, "x", "a", 0, map[int]int32{0: 200, 3: 100})
	var cands []cand
	r := &model.Request{ID: "r", DeviceCount: 2, ComputePercent: 50, QoS: model.QoSSilver}
	cands = fittingDevices(cycle(t, cl, r), ni, cands)
	var a framework.Assignment
	pickSet(ni, cands, 2, true, &a)
	require.Equal(t, []int{0, 1}, []int{a.Slices[0].Device, a.Slices[1].Device})
}

func TestRandomIsVolatileAndAuditSinks(t *testing.T) {
	t.Parallel()
	require.True(t, Random{}.Volatile())
	h := &handle{cl: newCluster(t, gpuNode("a", 8000, "T4", 1))}
	p, err := NewAudit(framework.Args{}, h)
	require.NoError(t, err)
	var got []*framework.Decision
	p.(*Audit).SetSink(func(_ context.Context, d *framework.Decision) { got = append(got, d) })
	p.(*Audit).Audit(context.Background(), &framework.Decision{Request: &model.Request{ID: "x"}, Status: "scheduled"})
	require.Len(t, got, 1)
	require.Equal(t, "x", got[0].Request.ID)
}

func TestRegistryBuildsEveryPlugin(t *testing.T) {
	t.Parallel()
	h := &handle{cl: newCluster(t)}
	for name, f := range Registry() {
		p, err := f(framework.Args{}, h)
		require.NoError(t, err, name)
		require.Equal(t, name, p.Name(), fmt.Sprintf("factory %s", name))
	}
}
