package framework_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/receivers/inventory"
	"github.com/heteroflow/heteroflow/scheduler/framework"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

var reasonTooSmall = framework.NewReason("test: node too small")

// firstFit assigns the first fitting devices; minCPU filters nodes.
type firstFit struct{ minCPU int64 }

func (firstFit) Name() string { return "FirstFit" }
func (p firstFit) Filter(_ context.Context, _ *framework.Cycle, n *model.NodeInfo) framework.Status {
	if n.Node.CPUMilli < p.minCPU {
		return framework.Reject(reasonTooSmall)
	}
	return framework.OK
}
func (firstFit) Assign(_ context.Context, c *framework.Cycle, n *model.NodeInfo, out *framework.Assignment) framework.Status {
	for i := range n.Devices {
		if len(out.Slices) == c.Req.DeviceCount {
			break
		}
		if s, ok := model.FitDevice(&n.Node.Devices[i], &n.Devices[i], c.Req, 1000); ok {
			s.Device = i
			out.Slices = append(out.Slices, s)
		}
	}
	if len(out.Slices) < c.Req.DeviceCount {
		return framework.Reject(0)
	}
	return framework.OK
}

// byIndex scores later nodes higher: score = node index.
type byIndex struct{}

func (byIndex) Name() string { return "ByIndex" }
func (byIndex) Score(_ context.Context, _ *framework.Cycle, n *model.NodeInfo, _ *framework.Assignment) (float64, framework.Status) {
	return float64(n.Index), framework.OK
}

// waiter holds every placement (a gang that is never complete).
type waiter struct{}

func (waiter) Name() string { return "Waiter" }
func (waiter) Permit(context.Context, *framework.Cycle, *model.Placement) (framework.Status, time.Duration) {
	return framework.Status{Code: framework.Wait}, time.Second
}

func registry(t *testing.T) framework.Registry {
	t.Helper()
	r := framework.Registry{}
	require.NoError(t, r.Register("FirstFit", func(a framework.Args, _ framework.Handle) (framework.Plugin, error) {
		var args struct {
			MinCPU int64 `yaml:"minCPU"`
		}
		return firstFit{minCPU: args.MinCPU}, a.Decode(&args)
	}))
	require.NoError(t, r.Register("ByIndex", func(framework.Args, framework.Handle) (framework.Plugin, error) { return byIndex{}, nil }))
	require.NoError(t, r.Register("Waiter", func(framework.Args, framework.Handle) (framework.Plugin, error) { return waiter{}, nil }))
	return r
}

func cluster(t *testing.T, cpus ...int64) *model.Cluster {
	t.Helper()
	cl, err := model.NewCluster(1)
	require.NoError(t, err)
	for i, cpu := range cpus {
		n := model.Node{Name: fmt.Sprintf("n%d", i), CPUMilli: cpu, MemoryMiB: 1024,
			Devices: []model.Device{{Vendor: inventory.VendorNVIDIA, Model: "T4", MemoryMiB: 16384, NUMA: -1,
				Isolation: inventory.IsolationFor(inventory.VendorNVIDIA, "T4")}}}
		_, err := cl.AddNode(n)
		require.NoError(t, err)
	}
	return cl
}

func profile(t *testing.T, text string) framework.Profile {
	t.Helper()
	p, err := framework.LoadProfile(strings.NewReader(text))
	require.NoError(t, err)
	return p
}

const testProfile = `
name: test
assign: FirstFit
plugins:
  - name: FirstFit
    args: {minCPU: 4000}
  - name: ByIndex
    weight: 2
`

func TestRegistryRefusesDuplicates(t *testing.T) {
	t.Parallel()
	r := registry(t)
	err := r.Register("FirstFit", func(framework.Args, framework.Handle) (framework.Plugin, error) { return firstFit{}, nil })
	require.ErrorContains(t, err, "already registered")
	require.Error(t, r.Merge(framework.Registry{"ByIndex": r["ByIndex"]}))
	require.Equal(t, []string{"ByIndex", "FirstFit", "Waiter"}, r.Names())
}

func TestProfileValidation(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, yaml, err string }{
		{"no name", "assign: A\nplugins: [{name: A}]", "name is required"},
		{"assign not listed", "name: x\nassign: B\nplugins: [{name: A}]", "must be one of the listed"},
		{"twice", "name: x\nassign: A\nplugins: [{name: A}, {name: A}]", "listed twice"},
		{"bad tie", "name: x\nassign: A\ntieBreak: coin\nplugins: [{name: A}]", "tieBreak"},
		{"bad weight", "name: x\nassign: A\nplugins: [{name: A, weight: -1}]", "weight"},
		{"unknown key", "name: x\nassign: A\nplugin: []", "field plugin not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := framework.LoadProfile(strings.NewReader(tt.yaml))
			require.ErrorContains(t, err, tt.err)
		})
	}
	// Round trip: Marshal → LoadProfile gives the same profile.
	p := profile(t, testProfile)
	b, err := p.Marshal()
	require.NoError(t, err)
	q := profile(t, string(b))
	require.Equal(t, p.Name, q.Name)
	require.Equal(t, p.Assign, q.Assign)
	require.Len(t, q.Plugins, 2)
	require.Equal(t, 2.0, *q.Plugins[1].Weight)
	// Unknown plugin and bad args are caught when building.
	_, err = framework.New(registry(t), profile(t, "name: x\nassign: Nope\nplugins: [{name: Nope}]"), cluster(t, 1), framework.Options{})
	require.ErrorContains(t, err, "unknown plugin")
	_, err = framework.New(registry(t), profile(t, "name: x\nassign: FirstFit\nplugins: [{name: FirstFit, args: {typo: 1}}]"), cluster(t, 1), framework.Options{})
	require.ErrorContains(t, err, "typo")
}

func TestScheduleAndDiagnosis(t *testing.T) {
	t.Parallel()
	cl := cluster(t, 2000, 8000, 8000)
	fw, err := framework.New(registry(t), profile(t, testProfile), cl, framework.Options{})
	require.NoError(t, err)
	ctx := context.Background()
	whole := func(id string) *model.Request {
		r := &model.Request{ID: id, DeviceCount: 1, QoS: model.QoSGold}
		require.NoError(t, r.Normalize())
		return r
	}
	// n0 is filtered (2000 < 4000); ByIndex prefers n2 (score 2×2=4 > 2×1).
	res, err := fw.Schedule(ctx, whole("a"), framework.ScheduleOptions{})
	require.NoError(t, err)
	require.Equal(t, "n2", res.Placement.Node)
	res, err = fw.Schedule(ctx, whole("b"), framework.ScheduleOptions{})
	require.NoError(t, err)
	require.Equal(t, "n1", res.Placement.Node, "n2's only device is taken: the memo must see n2 changed")
	// Nothing left: the diagnosis names every node with its reason.
	_, err = fw.Schedule(ctx, whole("c"), framework.ScheduleOptions{Diagnose: true})
	require.ErrorIs(t, err, framework.ErrUnschedulable)
	require.ErrorContains(t, err, "0/3 nodes are available: 2 no device slice fits, 1 test: node too small")
	res, _ = fw.Schedule(ctx, whole("c"), framework.ScheduleOptions{Diagnose: true})
	require.Len(t, res.Diagnosis.Nodes, 3)
	require.Equal(t, framework.NodeStatus{Node: "n0", Plugin: "FirstFit", Code: framework.Unschedulable, Reason: "test: node too small"}, res.Diagnosis.Nodes[0])
	require.NoError(t, cl.CheckInvariants())
	// A release frees n2 again.
	require.NoError(t, cl.Release("a"))
	res, err = fw.Schedule(ctx, whole("d"), framework.ScheduleOptions{})
	require.NoError(t, err)
	require.Equal(t, "n2", res.Placement.Node)
}

func TestRuntimeWeightsAndPermit(t *testing.T) {
	t.Parallel()
	cl := cluster(t, 8000, 8000, 8000)
	fw, err := framework.New(registry(t), profile(t, testProfile+"  - name: Waiter\n"), cl, framework.Options{})
	require.NoError(t, err)
	ctx := context.Background()
	r := &model.Request{ID: "a", DeviceCount: 1, ComputePercent: 10, QoS: model.QoSSilver}
	require.NoError(t, r.Normalize())
	res, err := fw.Schedule(ctx, r, framework.ScheduleOptions{})
	require.NoError(t, err)
	require.True(t, res.Waiting, "Permit Wait holds the placement")
	require.Equal(t, time.Second, res.Timeout)
	require.Equal(t, "n2", res.Placement.Node)

	// Weight 0 drops ByIndex: all nodes tie → lowest index (n0).
	require.NoError(t, fw.SetWeight("ByIndex", 0))
	r2 := &model.Request{ID: "b", DeviceCount: 1, ComputePercent: 10, QoS: model.QoSSilver}
	res, err = fw.Schedule(ctx, r2, framework.ScheduleOptions{})
	require.NoError(t, err)
	require.Equal(t, "n0", res.Placement.Node)
	require.ErrorContains(t, fw.SetEnabled("FirstFit", false), "cannot be disabled")
	require.Error(t, fw.SetWeight("Nope", 1))
	require.Error(t, fw.SetWeight("ByIndex", -1))

	// Concurrent readers and writers (run with -race).
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(2)
		go func(i int) {
			defer wg.Done()
			for k := 0; k < 50; k++ {
				_ = fw.SetWeight("ByIndex", float64(k%3))
				_ = fw.SetEnabled("Waiter", k%2 == 0)
			}
		}(i)
		go func(i int) {
			defer wg.Done()
			for k := 0; k < 50; k++ {
				rr := &model.Request{ID: fmt.Sprintf("c%d-%d", i, k), DeviceCount: 1, ComputePercent: 1, QoS: model.QoSSilver}
				_, err := fw.Schedule(ctx, rr, framework.ScheduleOptions{})
				if err != nil && !errors.Is(err, framework.ErrUnschedulable) {
					t.Error(err)
				}
				_ = fw.Plugins()
			}
		}(i)
	}
	wg.Wait()
	require.NoError(t, cl.CheckInvariants())
}
