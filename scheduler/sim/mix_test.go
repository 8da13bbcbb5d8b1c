package sim

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/scheduler/model"
)

func mixReq(id string, n int, milli int32) model.Request {
	return model.Request{ID: id, DeviceCount: n, ComputeMilli: milli, ComputePercent: float64(milli) / 10}
}

func TestMixShiftsMultiShare(t *testing.T) {
	t.Parallel()
	tasks := []model.Request{mixReq("a", 1, 1000), mixReq("b", 1, 1000), mixReq("c", 1, 1000), mixReq("d", 1, 1000), mixReq("e", 2, 1000)}
	// Demand 6000, multi 2000 (33%); to reach 50% one single becomes a
	// 2-device task: 7000 total, 4000 multi (57%).
	out, err := Mix{MultiShare: 0.5, Seed: 1}.Apply(tasks)
	require.NoError(t, err)
	require.Len(t, out, 5)
	_, multi := Shares(out)
	require.InDelta(t, 4.0/7, multi, 1e-9)
	require.Equal(t, 2, tasks[4].DeviceCount) // input untouched
	require.Equal(t, 1, tasks[0].DeviceCount)
	ids := map[string]bool{}
	for _, r := range out {
		ids[r.ID] = true
	}
	require.Len(t, ids, 5, "names are kept, one per task")
}

func TestMixLowersShareAndScalesFractions(t *testing.T) {
	t.Parallel()
	var tasks []model.Request
	for i := 0; i < 50; i++ {
		tasks = append(tasks, mixReq("s"+string(rune('A'+i)), 1, 400), mixReq("w"+string(rune('A'+i)), 1, 1000))
	}
	tasks = append(tasks, mixReq("cpu", 0, 0))
	out, err := Mix{FractionScale: 3, Seed: 9}.Apply(tasks)
	require.NoError(t, err)
	for _, r := range out {
		if r.DeviceCount == 1 && r.ID[0] == 's' {
			require.Equal(t, int32(MaxSharedMilli), r.ComputeMilli, "capped below a whole device")
			require.InDelta(t, 95.0, r.ComputePercent, 1e-9)
		}
	}
	// Shared 20,000 of 70,000 (29%) → at most 10%: shared tasks become whole ones.
	out, err = Mix{SharedShare: 0.1, Seed: 9}.Apply(tasks)
	require.NoError(t, err)
	shared, _ := Shares(out)
	require.LessOrEqual(t, shared, 0.1)
	require.Greater(t, shared, 0.05)
	// Same seed, same variant; another seed, another draw.
	again, err := Mix{SharedShare: 0.1, Seed: 9}.Apply(tasks)
	require.NoError(t, err)
	require.Equal(t, out, again)
	other, err := Mix{SharedShare: 0.1, Seed: 10}.Apply(tasks)
	require.NoError(t, err)
	require.NotEqual(t, out, other)
}

func TestParseMix(t *testing.T) {
	t.Parallel()
	m, err := ParseMix("scale=1.5, shared=0.8,seed=7")
	require.NoError(t, err)
	require.Equal(t, Mix{FractionScale: 1.5, SharedShare: 0.8, Seed: 7}, m)
	require.Equal(t, "scale=1.5,shared=0.8,seed=7", m.String())
	m, err = ParseMix("multi=0.3")
	require.NoError(t, err)
	require.Equal(t, uint64(1), m.Seed, "seed defaults to 1")
	for _, bad := range []string{"shared", "size=2", "shared=1.2", "shared=0.6,multi=0.5", "scale=-1", "seed=x"} {
		_, err := ParseMix(bad)
		require.Error(t, err, bad)
	}
	_, err = Mix{SharedShare: 0.5}.Apply([]model.Request{mixReq("w", 1, 1000)})
	require.Error(t, err, "no shared task to draw from")
}
