package plugins

import (
	"context"

	"github.com/heteroflow/heteroflow/scheduler/framework"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

var reasonNoRDMA = framework.NewReason("node has no InfiniBand/RoCE")

// RDMA sends tasks that ask for RDMA to InfiniBand/RoCE nodes, and scores
// RDMA nodes lower for tasks that do not, keeping the scarce fabric for
// the distributed jobs that need it.
type RDMA struct{}

var (
	_ framework.FilterPlugin = RDMA{}
	_ framework.ScorePlugin  = RDMA{}
)

// NewRDMA builds the plugin (no args).
func NewRDMA(args framework.Args, _ framework.Handle) (framework.Plugin, error) {
	return RDMA{}, args.Decode(&struct{}{})
}

// Name implements framework.Plugin.
func (RDMA) Name() string { return NameRDMA }

// Filter implements framework.FilterPlugin.
func (RDMA) Filter(_ context.Context, c *framework.Cycle, n *model.NodeInfo) framework.Status {
	if c.Req.RDMA && n.Node.RDMA == model.RDMANone {
		return framework.Never(reasonNoRDMA)
	}
	return framework.OK
}

// Score: 100 when the node's fabric matches the need, 0 when a task that
// does not need RDMA would sit on an RDMA node.
func (RDMA) Score(_ context.Context, c *framework.Cycle, n *model.NodeInfo, _ *framework.Assignment) (float64, framework.Status) {
	if !c.Req.RDMA && n.Node.RDMA != model.RDMANone {
		return 0, framework.OK
	}
	return 100, framework.OK
}
