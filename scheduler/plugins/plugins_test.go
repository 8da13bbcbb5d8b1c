package plugins

import (
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
			MemoryMiB: 16384, Isolation: inventory.IsolationFor(inventory.VendorNVIDIA, model_)})
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

func mustArgs(t *testing.T, y string) framework.Args {
	t.Helper()
	a, err := framework.ArgsFromYAML(y)
	require.NoError(t, err)
	return a
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
