package plugins

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	pmodel "github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/scheduler/framework"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

// fakeSampler answers utilisation per (host, index) and counts queries.
type fakeSampler struct {
	util  map[string]map[int]float64
	calls int
	err   error
}

func (f *fakeSampler) Instant(_ context.Context, expr string, _ time.Time) (pmodel.Vector, error) {
	f.calls++
	if f.err != nil {
		return nil, f.err
	}
	var v pmodel.Vector
	if expr != DefaultUtilizationQuery {
		return v, nil // memory: no samples (unknown, never 0)
	}
	for host, devs := range f.util {
		for idx, u := range devs {
			v = append(v, &pmodel.Sample{Metric: pmodel.Metric{"host_name": pmodel.LabelValue(host),
				"hw_index": pmodel.LabelValue(strconv.Itoa(idx))}, Value: pmodel.SampleValue(u)})
		}
	}
	return v, nil
}

func TestLoadAware(t *testing.T) {
	t.Parallel()
	n := gpuNode("node-1", 16000, "T4", 3)
	n.Labels = map[string]string{HostLabel: "gpu-host-1"}
	cl := newCluster(t, n)
	// Device 0 already holds 600 milli: binpack alone would pick it first.
	place(t, cl, "x", "node-1", 0, map[int]int32{0: 600})
	h := &handle{cl: cl}
	pl, err := NewLoadAware(framework.Args{}, h)
	require.NoError(t, err)
	la := pl.(*LoadAware)
	now := time.Unix(1000, 0)
	la.SetClock(func() time.Time { return now })
	src := &fakeSampler{util: map[string]map[int]float64{"gpu-host-1": {0: 0.97, 1: 0.2}}}
	la.SetSampler(src)
	ctx := context.Background()
	ni := cl.Nodes[0]

	tests := []struct {
		name    string
		qos     model.QoS
		count   int
		filter  framework.Code
		devices []int
	}{
		// Device 0 is saturated (0.97 ≥ 0.9): bronze goes to the tightest
		// unsaturated device; 1 and 2 are equally free, 1 comes first.
		{"bronze avoids saturated device", model.QoSBronze, 1, framework.Success, []int{1}},
		// Silver is not guarded by default: binpack takes busy device 0.
		{"silver not guarded", model.QoSSilver, 1, framework.Success, []int{0}},
		// Three bronze slices but only two unsaturated devices.
		{"not enough unsaturated devices", model.QoSBronze, 3, framework.UnschedulableAndUnresolvable, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cycle(t, cl, &model.Request{ID: "r", DeviceCount: tt.count, ComputePercent: 25, QoS: tt.qos})
			require.True(t, la.PreScore(ctx, c).IsSuccess())
			require.Equal(t, tt.filter, la.Filter(ctx, c, ni).Code)
			if tt.filter != framework.Success {
				return
			}
			var a framework.Assignment
			require.True(t, la.Assign(ctx, c, ni, &a).IsSuccess())
			var got []int
			for _, s := range a.Slices {
				got = append(got, s.Device)
			}
			require.Equal(t, tt.devices, got)
		})
	}
	// One refresh for all of the above: 2 queries (utilisation, memory).
	require.Equal(t, 2, src.calls)
	// Score: device 1 at 20% → 80; device 2 unknown → neutral 50.
	s, _ := la.Score(ctx, nil, ni, &framework.Assignment{Slices: []model.Slice{{Device: 1}}})
	require.InDelta(t, 80, s, 1e-9)
	s, _ = la.Score(ctx, nil, ni, &framework.Assignment{Slices: []model.Slice{{Device: 2}}})
	require.InDelta(t, 50, s, 1e-9)

	// After the interval: one more refresh, invalidating the memo; a failed
	// query keeps the previous sample.
	now = now.Add(16 * time.Second)
	src.err = errors.New("prometheus down")
	c := cycle(t, cl, &model.Request{ID: "r", DeviceCount: 1, ComputePercent: 25, QoS: model.QoSBronze})
	la.PreScore(ctx, c)
	require.Equal(t, 3, src.calls)
	q, _, err := la.Stats()
	require.Equal(t, 3, q)
	require.Error(t, err)
	var a framework.Assignment
	require.True(t, la.Assign(ctx, c, ni, &a).IsSuccess())
	require.Equal(t, 1, a.Slices[0].Device, "saturation still known after a failed refresh")
	require.Equal(t, 1, h.invalidated)
}

func TestLoadAwareArgs(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"interval: 10ms", "saturatedUtilization: 1.5", "strategy: random", "guardTiers: [platinum]", "nope: 1"} {
		t.Run(bad, func(t *testing.T) {
			a, err := framework.ArgsFromYAML(bad)
			require.NoError(t, err)
			_, err = NewLoadAware(a, &handle{})
			require.Error(t, err)
		})
	}
}
