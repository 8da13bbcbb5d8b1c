package plugins

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/scheduler/framework"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

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
