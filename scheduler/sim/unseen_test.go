package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/scheduler/model"
)

// shiftMix returns a copy of tasks in which randomly chosen "victim" tasks
// are replaced by tasks drawn from the trace's own "pool" tasks until the
// pool's share of GPU demand reaches share. This is how the openb family
// varies one dimension (multigpuNN: multi-device tasks are NN% of GPU
// demand; gpushareNN: shared-device tasks are), so it makes traces that no
// profile was tuned on.
func shiftMix(tasks []model.Request, pool, victim func(*model.Request) bool, share float64, seed uint64) []model.Request {
	out := append([]model.Request(nil), tasks...)
	var from []model.Request
	var total, inPool int64
	for i := range out {
		total += demand(&out[i])
		if pool(&out[i]) {
			from = append(from, out[i])
			inPool += demand(&out[i])
		}
	}
	rng := rand.New(rand.NewPCG(seed, 0x3157))
	for float64(inPool) < share*float64(total) {
		i := rng.IntN(len(out))
		if !victim(&out[i]) {
			continue
		}
		t := from[rng.IntN(len(from))]
		t.ID = out[i].ID
		total += demand(&t) - demand(&out[i])
		inPool += demand(&t)
		out[i] = t
	}
	return out
}

// TestOpenbUnseenMixes: on openb variants beyond the published ones
// (multi-device tasks at 50% and 60% of GPU demand, shared tasks at 80%)
// the default profile still places more than our literal FGD, over the
// paper's ten seeds. The published figures cover only the twelve traces;
// this checks that the default's margin is not an artefact of them.
func TestOpenbUnseenMixes(t *testing.T) {
	dir, nodes, seeds := fullOpenb(t)
	multi := func(r *model.Request) bool { return r.DeviceCount > 1 }
	single := func(r *model.Request) bool { return r.DeviceCount == 1 }
	shared := func(r *model.Request) bool { return r.DeviceCount == 1 && r.ComputeMilli < model.WholeMilli }
	whole := func(r *model.Request) bool { return r.DeviceCount == 1 && r.ComputeMilli == model.WholeMilli }
	tests := []struct {
		name, base   string
		pool, victim func(*model.Request) bool
		share        float64
	}{
		{"multigpu50", "multigpu40", multi, single, 0.50},
		{"multigpu60", "multigpu40", multi, single, 0.60},
		{"gpushare80", "gpushare60", shared, whole, 0.80},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			base, err := LoadTasks(dir + "openb_pod_list_" + tt.base + ".csv")
			require.NoError(t, err)
			tasks := shiftMix(base, tt.pool, tt.victim, tt.share, 1)
			got := map[string]float64{}
			for _, name := range []string{"default", "fgd"} {
				prof, err := LoadProfile(name)
				require.NoError(t, err)
				rep, _, err := Replay(context.Background(), Config{Nodes: nodes, Tasks: tasks, Profile: prof, Tune: 1.3}, seeds)
				require.NoError(t, err)
				got[name] = rep.AllocationPercent["130"].Mean
			}
			t.Logf("%s: default %.2f, fgd %.2f", tt.name, got["default"], got["fgd"])
			require.Greater(t, got["default"], got["fgd"], fmt.Sprintf("%s: default below literal FGD", tt.name))
		})
	}
}

func TestShiftMix(t *testing.T) {
	t.Parallel()
	mk := func(id string, n int, milli int32) model.Request {
		return model.Request{ID: id, DeviceCount: n, ComputeMilli: milli}
	}
	tasks := []model.Request{mk("a", 1, 1000), mk("b", 1, 1000), mk("c", 1, 1000), mk("d", 1, 1000), mk("e", 2, 1000)}
	// Demand 6000, multi 2000 (33%); to reach 50% one single becomes a
	// 2-device task: 7000 total, 4000 multi (57%).
	out := shiftMix(tasks, func(r *model.Request) bool { return r.DeviceCount > 1 },
		func(r *model.Request) bool { return r.DeviceCount == 1 }, 0.5, 1)
	require.Len(t, out, 5)
	var multi int
	for _, r := range out {
		if r.DeviceCount > 1 {
			multi++
		}
	}
	require.Equal(t, 2, multi)
	require.Equal(t, 2, tasks[4].DeviceCount) // input untouched
	require.Equal(t, 1, tasks[0].DeviceCount)
}
