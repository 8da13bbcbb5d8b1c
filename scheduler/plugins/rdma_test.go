package plugins

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/scheduler/framework"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

// TestRDMA: a task that asks for RDMA is refused on nodes without a fabric
// and scores 100 on InfiniBand/RoCE nodes; a task that does not ask
// prefers nodes without a fabric (100 vs 0), keeping fabrics free.
func TestRDMA(t *testing.T) {
	t.Parallel()
	ib := gpuNode("ib", 8000, "V100M32", 1)
	ib.RDMA = model.RDMAInfiniBand
	roce := gpuNode("roce", 8000, "V100M32", 1)
	roce.RDMA = model.RDMARoCE
	cl := newCluster(t, gpuNode("plain", 8000, "T4", 1), ib, roce)
	ctx := context.Background()
	tests := []struct {
		name   string
		rdma   bool
		filter [3]framework.Code // plain, ib, roce
		score  [3]float64
	}{
		{"rdma wanted", true,
			[3]framework.Code{framework.UnschedulableAndUnresolvable, framework.Success, framework.Success}, [3]float64{100, 100, 100}},
		{"not wanted", false,
			[3]framework.Code{framework.Success, framework.Success, framework.Success}, [3]float64{100, 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := model.Request{ID: "r", DeviceCount: 1, QoS: model.QoSSilver, RDMA: tt.rdma}
			c := cycle(t, cl, &r)
			for i := range cl.Nodes {
				require.Equal(t, tt.filter[i], RDMA{}.Filter(ctx, c, cl.Nodes[i]).Code, cl.Nodes[i].Node.Name)
				got, _ := RDMA{}.Score(ctx, c, cl.Nodes[i], nil)
				require.Equal(t, tt.score[i], got, cl.Nodes[i].Node.Name)
			}
		})
	}
}
