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
	specs, err := BuildWorkload(reqs, coverage)
	if err != nil {
		return nil, err
	}
	f := &Fragmentation{h: meterHandle{cl}, coverage: coverage}
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

// Total is the cluster fragmentation in milli-devices.
func (m *FragMeter) Total() float64 { return m.total }
