package model

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/receivers/inventory"
)

func testCluster(t *testing.T, ratio float64) *Cluster {
	t.Helper()
	cl, err := NewCluster(ratio)
	require.NoError(t, err)
	models := []struct {
		vendor, model string
		mem           int64
	}{
		{inventory.VendorNVIDIA, "A100-SXM4-40GB", 40960},
		{inventory.VendorAscend, "910B3", 65536},
		{inventory.VendorNVIDIA, "T4", 16384},
	}
	for i, m := range models {
		n := Node{Name: fmt.Sprintf("n%d", i), CPUMilli: 64000, MemoryMiB: 256000}
		for d := 0; d < 4; d++ {
			n.Devices = append(n.Devices, dev(m.vendor, m.model, m.mem))
			n.Devices[d].Index = d
		}
		_, err := cl.AddNode(n)
		require.NoError(t, err)
	}
	return cl
}

// TestLedgerProperty throws random slices — valid and invalid — at the
// ledger and random releases; whatever it accepts, the invariants hold:
// no device over compute or memory, gold never shares outside a
// partition, and the node state equals the sum of the placements.
func TestLedgerProperty(t *testing.T) {
	t.Parallel()
	for seed := uint64(1); seed <= 20; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(seed, 7))
			cl := testCluster(t, 1.5)
			var live []string
			accepted, refused := 0, 0
			for step := 0; step < 400; step++ {
				if len(live) > 0 && rng.IntN(4) == 0 {
					i := rng.IntN(len(live))
					require.NoError(t, cl.Release(live[i]))
					live = append(live[:i], live[i+1:]...)
				} else {
					ni := cl.Nodes[rng.IntN(len(cl.Nodes))]
					qos := []QoS{QoSGold, QoSSilver, QoSBronze}[rng.IntN(3)]
					r := &Request{ID: fmt.Sprintf("t%d", step), DeviceCount: 1 + rng.IntN(2), QoS: qos,
						MemoryMiB: int64(rng.IntN(24000)), ComputePercent: float64(5 + rng.IntN(96)), CPUMilli: int64(rng.IntN(9000))}
					require.NoError(t, r.Normalize())
					p := Placement{TaskID: r.ID, Node: ni.Node.Name, CPUMilli: r.CPUMilli}
					for k := 0; k < r.DeviceCount; k++ {
						d := rng.IntN(len(ni.Devices))
						s, ok := FitDevice(&ni.Node.Devices[d], &ni.Devices[d], r, cl.RatioMilli())
						if !ok || rng.IntN(5) == 0 {
							// Forge a slice the device may not take: the
							// ledger must refuse it, not trust its caller.
							s = Slice{QoS: qos, MemoryMiB: r.MemoryMiB, ComputeMilli: r.ComputeMilli, Start: -1}
						}
						s.Device = d
						p.Slices = append(p.Slices, s)
					}
					if err := cl.Assign(p); err == nil {
						live = append(live, r.ID)
						accepted++
					} else {
						refused++
					}
				}
				require.NoError(t, cl.CheckInvariants(), "step %d", step)
			}
			require.Positive(t, accepted)
			require.Positive(t, refused)
			for _, id := range live {
				require.NoError(t, cl.Release(id))
			}
			require.NoError(t, cl.CheckInvariants())
			for _, n := range cl.Nodes {
				require.Equal(t, n.Node.CPUMilli, n.FreeCPU)
				for _, d := range n.Devices {
					require.Equal(t, DeviceState{FreeMilli: WholeMilli}, d)
				}
			}
		})
	}
}

func TestLedgerErrors(t *testing.T) {
	t.Parallel()
	cl := testCluster(t, 1)
	p := Placement{TaskID: "a", Node: "n2", CPUMilli: 1000, Slices: []Slice{{Device: 0, QoS: QoSSilver, ComputeMilli: 500, Start: -1}}}
	require.NoError(t, cl.Assign(p))
	require.ErrorIs(t, cl.Assign(p), ErrDuplicate)
	require.ErrorIs(t, cl.Assign(Placement{TaskID: "b", Node: "nope"}), ErrUnknownNode)
	require.ErrorIs(t, cl.Assign(Placement{TaskID: "c", Node: "n2", CPUMilli: 1 << 40}), ErrNoFit)
	// 500 + 600 milli > 1000 on device 0.
	require.ErrorIs(t, cl.Assign(Placement{TaskID: "d", Node: "n2", Slices: []Slice{{Device: 0, QoS: QoSSilver, ComputeMilli: 600, Start: -1}}}), ErrNoFit)
	require.ErrorIs(t, cl.Release("zzz"), ErrNotFound)
	got, ok := cl.Placement("a")
	require.True(t, ok)
	require.Equal(t, "n2", got.Node)
	require.Len(t, cl.Placements(), 1)
	_, err := NewCluster(0.5)
	require.Error(t, err)
}
