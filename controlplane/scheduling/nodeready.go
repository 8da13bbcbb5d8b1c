package scheduling

import (
	"context"

	"github.com/heteroflow/heteroflow/scheduler/framework"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

// NameNodeReady is the plugin that keeps tasks off nodes that are offline,
// cordoned or draining, and off nodes of another tenant's dedicated pool
// (pools.go).
const NameNodeReady = "NodeReady"

var (
	reasonOffline  = framework.NewReason("node offline")
	reasonCordoned = framework.NewReason("node cordoned or draining")
)

// nodeReady filters on the node state the loop keeps per node index. A
// state change bumps the node's version (snapshot.go), so the memo sees it.
type nodeReady struct{ s *snapshot }

var _ framework.FilterPlugin = (*nodeReady)(nil)

func (*nodeReady) Name() string { return NameNodeReady }

func (p *nodeReady) Filter(_ context.Context, c *framework.Cycle, n *model.NodeInfo) framework.Status {
	st := p.s.readiness(n.Index)
	switch {
	case st == nodeOffline:
		return framework.Never(reasonOffline)
	case st == nodeCordoned:
		return framework.Never(reasonCordoned)
	}
	if c != nil && c.Req != nil && n.Node != nil {
		return p.s.pools.admits(c.Req.Tenant, n.Node.Labels)
	}
	return framework.OK
}
