package plugins

import (
	"context"
	"log/slog"

	"github.com/heteroflow/heteroflow/scheduler/framework"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

// FragMeter keeps the cluster fragmentation Σ_n F_n (the FGD metric)
// incrementally: Update recomputes only the node that changed.
type FragMeter struct {
	f       *Fragmentation
	perNode []float64
	total   float64
}

type meterHandle struct{ cl *model.Cluster }

func (h meterHandle) Cluster() *model.Cluster { return h.cl }
func (meterHandle) Logger() *slog.Logger      { return slog.New(slog.DiscardHandler) }
func (meterHandle) Invalidate()               {}

// NewFragMeter measures fragmentation against the workload observed in
// reqs at the given coverage.
func NewFragMeter(cl *model.Cluster, reqs []model.Request, coverage float64) (*FragMeter, error) {
	return newFragMeter(cl, reqs, coverage, false)
}

// NewSlicingFragMeter measures fragmentation under slicing rules (see
// Fragmentation's SlicingRules): capacity that no demanded MIG profile or
// vNPU template can take is fragmented, partition room one can take is not.
func NewSlicingFragMeter(cl *model.Cluster, reqs []model.Request, coverage float64) (*FragMeter, error) {
	return newFragMeter(cl, reqs, coverage, true)
}

func newFragMeter(cl *model.Cluster, reqs []model.Request, coverage float64, slicing bool) (*FragMeter, error) {
	build := BuildWorkload
	if slicing {
		build = BuildWorkloadByQoS
	}
	specs, err := build(reqs, coverage)
	if err != nil {
		return nil, err
	}
	f := &Fragmentation{h: meterHandle{cl}, coverage: coverage, slicing: slicing}
	if err := f.SetWorkload(specs); err != nil {
		return nil, err
	}
	f.PreScore(context.Background(), &framework.Cycle{Cluster: cl})
	m := &FragMeter{f: f, perNode: make([]float64, len(cl.Nodes))}
	for i, n := range cl.Nodes {
		m.perNode[i] = f.NodeFrag(n)
		m.total += m.perNode[i]
	}
	return m, nil
}

// Update refreshes one node's share after it changed.
func (m *FragMeter) Update(n *model.NodeInfo) {
	v := m.f.NodeFrag(n)
	m.total += v - m.perNode[n.Index]
	m.perNode[n.Index] = v
}

// Node is node i's fragmentation F_n in milli-devices.
func (m *FragMeter) Node(i int) float64 { return m.perNode[i] }

// Total is the cluster fragmentation in milli-devices.
func (m *FragMeter) Total() float64 { return m.total }
