package plugins

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/scheduler/framework"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

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
