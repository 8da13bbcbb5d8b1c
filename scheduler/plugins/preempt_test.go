package plugins

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/scheduler/framework"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

func TestPreempt(t *testing.T) {
	t.Parallel()
	type placed struct {
		id      string
		dev     int
		milli   int32
		qos     model.QoS
		prio    int
		running bool
	}
	tests := []struct {
		name    string
		mode    string
		placed  []placed
		reqQoS  model.QoS
		victims []string // nil: no proposal
	}{
		// Both devices busy; the lowest priority goes.
		{"lowest priority victim", PreemptPreemptRunning,
			[]placed{{"a", 0, 500, model.QoSBronze, 1, true}, {"b", 1, 500, model.QoSBronze, 5, true}}, model.QoSSilver, []string{"a"}},
		// queue-only never displaces running tasks, only placed-not-started.
		{"queue-only spares running", PreemptQueueOnly,
			[]placed{{"a", 0, 500, model.QoSBronze, 1, true}, {"b", 1, 500, model.QoSBronze, 5, true}}, model.QoSSilver, nil},
		{"queue-only takes not started", PreemptQueueOnly,
			[]placed{{"a", 0, 500, model.QoSBronze, 1, true}, {"b", 1, 500, model.QoSBronze, 5, false}}, model.QoSSilver, []string{"b"}},
		// Gold on device 0 is safe from a Silver preemptor even at priority 1.
		{"gold never preempted by lower tier", PreemptPreemptRunning,
			[]placed{{"g", 0, 1000, model.QoSGold, 1, true}, {"b", 1, 500, model.QoSBronze, 5, true}}, model.QoSSilver, []string{"b"}},
		{"gold preempts gold", PreemptPreemptRunning,
			[]placed{{"g", 0, 1000, model.QoSGold, 1, true}, {"b", 1, 500, model.QoSBronze, 5, true}}, model.QoSGold, []string{"g"}},
		// Equal or higher priority is never displaced.
		{"no lower priority", PreemptPreemptRunning,
			[]placed{{"a", 0, 500, model.QoSBronze, 10, true}, {"b", 1, 500, model.QoSBronze, 12, true}}, model.QoSSilver, nil},
		// Lowest first takes a (dev 0, still shared with c) then b (dev 1
		// free: fits); the reprieve gives a back: {b} alone suffices.
		{"reprieve keeps the set minimal", PreemptPreemptRunning,
			[]placed{{"a", 0, 300, model.QoSBronze, 1, true}, {"b", 1, 1000, model.QoSSilver, 2, true}, {"c", 0, 300, model.QoSBronze, 9, true}},
			model.QoSSilver, []string{"b"}},
		{"off", PreemptOff, []placed{{"a", 0, 500, model.QoSBronze, 1, true}, {"b", 1, 500, model.QoSBronze, 1, true}}, model.QoSSilver, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cl := newCluster(t, gpuNode("n", 8000, "T4", 2))
			meta := map[string]VictimMeta{}
			for _, p := range tt.placed {
				s := model.Slice{Device: p.dev, QoS: p.qos, ComputeMilli: p.milli, Start: -1}
				if p.qos == model.QoSGold {
					s.Isolation, s.MemoryMiB = "whole", 16384
				}
				require.NoError(t, cl.Assign(model.Placement{TaskID: p.id, Node: "n", Slices: []model.Slice{s}}))
				meta[p.id] = VictimMeta{Priority: p.prio, QoS: p.qos, Running: p.running}
			}
			args, err := framework.ArgsFromYAML("mode: " + tt.mode)
			require.NoError(t, err)
			pl, err := NewPreempt(args, nil)
			require.NoError(t, err)
			pr := pl.(*Preempt)
			pr.SetVictimInfo(func(id string) (VictimMeta, bool) { m, ok := meta[id]; return m, ok })
			// A whole device at priority 10.
			c := cycle(t, cl, &model.Request{ID: "hp", DeviceCount: 1, ComputePercent: 100, QoS: tt.reqQoS, Priority: 10})
			before := cl.Placements()
			node, _ := pr.PostFilter(context.Background(), c,
				&framework.Diagnosis{Nodes: []framework.NodeStatus{{Node: "n", Code: framework.Unschedulable}}})
			require.Equal(t, before, cl.Placements(), "PostFilter must leave the cluster as it was")
			require.NoError(t, cl.CheckInvariants())
			prop := pr.Take()
			if tt.victims == nil {
				require.Empty(t, node)
				require.Nil(t, prop)
				return
			}
			require.Equal(t, "n", node)
			require.Equal(t, tt.victims, prop.Victims)
		})
	}
}
