package plugins

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/scheduler/framework"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

// deadSpaceWorkload: whole devices, 470 and 320 milli are common; the 160-
// milli shape (0.5 % of tasks) is below the default filler share.
var deadSpaceWorkload = []WorkloadSpec{
	{CPUMilli: 1000, DeviceCount: 1, ComputeMilli: 1000, Weight: 0.495},
	{CPUMilli: 1000, DeviceCount: 1, ComputeMilli: 470, Weight: 0.25},
	{CPUMilli: 1000, DeviceCount: 1, ComputeMilli: 320, Weight: 0.25},
	{CPUMilli: 1000, DeviceCount: 1, ComputeMilli: 160, Weight: 0.005},
}

func TestDeadSpaceTable(t *testing.T) {
	t.Parallel()
	dead := deadSpaceTable(deadSpaceWorkload, defaultFillerShare)
	for g, want := range map[int]int64{
		0:    0,
		210:  210, // only the rare 160 fits: not a filler
		360:  40,  // one 320
		530:  60,  // one 470
		680:  40,  // two 320s
		1000: 0,   // one whole-device task
	} {
		require.Equal(t, want, dead[g], "dead(%d)", g)
	}
	// With the 160-milli shape counted as a filler, a 210 gap is no longer dead.
	require.Equal(t, int64(50), deadSpaceTable(deadSpaceWorkload, 0.005)[210])
}

// TestDeadSpaceKeepsGapsFillable: node a's device has a 530-milli gap (a
// 470 task on it), node b's device is free; a 320-milli task arrives. FGD's
// measure prefers the gap (a free device is worth more to whole-device
// shapes) and leaves 210 milli that only the rare 160-milli shape fits;
// with the dead-space term the task opens b's device, whose 680 left two
// more 320 tasks fill (dead 40), and a keeps its gap for a 470 task.
func TestDeadSpaceKeepsGapsFillable(t *testing.T) {
	t.Parallel()
	cl := newCluster(t, gpuNode("a", 64000, "T4", 1), gpuNode("b", 64000, "T4", 1))
	place(t, cl, "x", "a", 1000, map[int]int32{0: 470})
	r := &model.Request{ID: "r", DeviceCount: 1, ComputePercent: 32, CPUMilli: 1000, QoS: model.QoSSilver}
	costs := func(args string) (onA, onB float64) {
		h := &handle{cl: cl}
		p, err := NewFragmentation(mustArgs(t, args), h)
		require.NoError(t, err)
		f := p.(*Fragmentation)
		require.NoError(t, f.SetWorkload(deadSpaceWorkload))
		c := cycle(t, cl, r)
		require.True(t, f.PreScore(context.Background(), c).IsSuccess())
		var a, b framework.Assignment
		require.True(t, f.Assign(context.Background(), c, cl.Nodes[0], &a).IsSuccess())
		require.True(t, f.Assign(context.Background(), c, cl.Nodes[1], &b).IsSuccess())
		// Without Fragmentation's own Assign (the live profile) Score prices the same.
		require.InDelta(t, a.Cost, f.Delta(cl.Nodes[0], r, a.Slices, cl.RatioMilli()), 1e-9)
		return a.Cost, b.Cost
	}
	// FGD on a: 530 → 210 on a device that cannot host a whole one anyway:
	// 1000-shape −0.495·320, 470 and 320 shapes +0.25·210 each → −53.4.
	// On b: the free device no longer hosts a whole one: +0.495·680 = 336.6.
	fgdA, fgdB := costs("coverage: 1.0")
	require.InDelta(t, -53.4, fgdA, 1e-9)
	require.InDelta(t, 336.6, fgdB, 1e-9)
	// Dead space, weight 10: a 60 → 210 (+150), b 0 → 40 (+40).
	deadA, deadB := costs("deadSpace: 10")
	require.InDelta(t, fgdA+1500, deadA, 1e-9)
	require.InDelta(t, fgdB+400, deadB, 1e-9)
	require.Less(t, deadB, deadA, "the dead-space term keeps a's gap for a 470 task")
}

func TestDeadSpaceArgs(t *testing.T) {
	t.Parallel()
	h := &handle{cl: newCluster(t)}
	for _, bad := range []string{"deadSpace: -1", "fillerShare: 0", "fillerShare: 1.5"} {
		_, err := NewFragmentation(mustArgs(t, bad), h)
		require.Error(t, err, bad)
	}
}
