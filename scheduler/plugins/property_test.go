package plugins

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/receivers/inventory"
	"github.com/heteroflow/heteroflow/scheduler/framework"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

const propProfile = `
name: prop
assign: Fragmentation
plugins:
  - name: GPUType
  - name: ResourceFit
  - name: RDMA
  - name: Topology
  - name: Fragmentation
    weight: 3000
    args: {coverage: 1.0, hostAware: true, demandExponent: -0.3}
  - name: BestFit
  - name: BinPack
  - name: Audit
`

// heteroCluster: MIG A100s, Ascend vNPU, T4s, Cambricon (whole-device gold).
func heteroCluster(t testing.TB, nodes int, rng *rand.Rand) *model.Cluster {
	cl, err := model.NewCluster(1.5)
	require.NoError(t, err)
	kinds := []struct {
		vendor, model string
		mem           int64
	}{
		{inventory.VendorNVIDIA, "A100-SXM4-80GB", 81920},
		{inventory.VendorNVIDIA, "H100-SXM5-80GB", 81920},
		{inventory.VendorAscend, "910B2", 65536},
		{inventory.VendorNVIDIA, "T4", 16384},
		{inventory.VendorCambricon, "MLU370-X8", 49152},
	}
	for i := 0; i < nodes; i++ {
		k := kinds[i%len(kinds)]
		n := model.Node{Name: fmt.Sprintf("node-%05d", i), CPUMilli: 96000, MemoryMiB: 512 * 1024}
		if i%3 == 0 {
			n.RDMA = model.RDMARoCE
		}
		for d := 0; d < 8; d++ {
			dv := model.Device{Index: d, Vendor: k.vendor, Model: k.model, MemoryMiB: k.mem, NUMA: d / 4,
				Isolation: inventory.IsolationFor(k.vendor, k.model)}
			peer := d ^ 1 // NVLink/HCCS pairs
			dv.Links = []inventory.Link{{Peer: peer, Type: inventory.LinkNVLink}}
			n.Devices = append(n.Devices, dv)
		}
		_, err := cl.AddNode(n)
		require.NoError(t, err)
	}
	return cl
}

func randomRequest(rng *rand.Rand, id int) model.Request {
	r := model.Request{ID: fmt.Sprintf("task-%07d", id), CPUMilli: int64(1000 * (1 + rng.IntN(16))),
		HostMemoryMiB: int64(1024 * rng.IntN(64))}
	switch k := rng.IntN(10); {
	case k < 1: // CPU only
	case k < 5:
		r.DeviceCount, r.ComputePercent, r.MemoryMiB = 1, float64(5+rng.IntN(90)), int64(512*rng.IntN(40))
	case k < 8:
		r.DeviceCount, r.ComputePercent = 1, 100
	default:
		r.DeviceCount, r.ComputePercent = []int{2, 4, 8}[rng.IntN(3)], 100
	}
	r.QoS = []model.QoS{model.QoSGold, model.QoSSilver, model.QoSBronze, model.QoSSilver}[rng.IntN(4)]
	if rng.IntN(6) == 0 {
		r.Models = []string{"T4", "910B2"}[rng.IntN(2) : rng.IntN(2)+1]
	}
	r.RDMA = rng.IntN(10) == 0
	return r
}

// TestPlacementProperty drives random requests and releases through the
// full default plugin set and checks after every step: the ledger's
// invariants (model.CheckInvariants), and independently that no device is
// over compute or memory and gold never shares a device outside a
// hardware partition. It also replays the run with the memo off (a
// Volatile plugin at weight 0) and requires identical placements.
func TestPlacementProperty(t *testing.T) {
	t.Parallel()
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			a := runProperty(t, seed, propProfile)
			b := runProperty(t, seed, propProfile+"  - name: Random\n    weight: 0\n")
			require.Equal(t, a, b, "memoised and unmemoised runs must place identically")
		})
	}
}

func runProperty(t *testing.T, seed uint64, prof string) []string {
	rng := rand.New(rand.NewPCG(seed, 3))
	cl := heteroCluster(t, 20, rng)
	p, err := framework.LoadProfile(strings.NewReader(prof))
	require.NoError(t, err)
	fw, err := framework.New(Registry(), p, cl, framework.Options{Seed: seed})
	require.NoError(t, err)
	var hist []model.Request
	for i := 0; i < 200; i++ {
		hist = append(hist, randomRequest(rng, -i))
	}
	for i := range hist {
		require.NoError(t, hist[i].Normalize())
	}
	fr, _ := fw.Plugin(NameFragmentation)
	require.NoError(t, fr.(*Fragmentation).ObserveWorkload(hist))
	var live, trace []string
	placed := 0
	for step := 0; step < 600; step++ {
		if len(live) > 0 && rng.IntN(5) == 0 {
			k := rng.IntN(len(live))
			require.NoError(t, cl.Release(live[k]))
			live = append(live[:k], live[k+1:]...)
			continue
		}
		r := randomRequest(rng, step)
		res, err := fw.Schedule(context.Background(), &r, framework.ScheduleOptions{Diagnose: step%7 == 0})
		if errors.Is(err, framework.ErrUnschedulable) {
			trace = append(trace, r.ID+":-")
			continue
		}
		require.NoError(t, err)
		placed++
		live = append(live, r.ID)
		trace = append(trace, r.ID+":"+res.Placement.Node)
		checkPlacement(t, cl, &r, res.Placement)
		require.NoError(t, cl.CheckInvariants(), "step %d", step)
	}
	require.Greater(t, placed, 100)
	return trace
}

func checkPlacement(t *testing.T, cl *model.Cluster, r *model.Request, p *model.Placement) {
	ni, err := cl.Node(p.Node)
	require.NoError(t, err)
	require.Len(t, p.Slices, r.DeviceCount)
	if r.RDMA {
		require.NotEqual(t, model.RDMANone, ni.Node.RDMA)
	}
	for _, s := range p.Slices {
		d, st := &ni.Node.Devices[s.Device], &ni.Devices[s.Device]
		require.True(t, r.ModelAllowed(d.Vendor, d.Model))
		require.GreaterOrEqual(t, st.FreeMilli, int32(0), "compute over capacity")
		require.LessOrEqual(t, st.MemUsed, d.MemoryMiB, "memory over capacity")
		require.LessOrEqual(t, st.PartMem, d.MemoryMiB)
		require.GreaterOrEqual(t, s.MemoryMiB, r.MemoryMiB)
		if r.QoS == model.QoSGold {
			// Gold: a hardware partition (device in partition mode) or the
			// whole device alone.
			if s.Profile != "" {
				require.Equal(t, model.ModePartitioned, st.Mode)
				require.NotEmpty(t, d.Isolation.Hardware)
			} else {
				require.Equal(t, model.ModeExclusive, st.Mode)
				require.Equal(t, int16(1), st.Slices)
				require.Equal(t, int32(0), st.FreeMilli)
			}
		} else {
			require.Equal(t, model.ModeShared, st.Mode)
			if r.QoS == model.QoSSilver {
				require.NotEmpty(t, d.Isolation.DriverLimits, "silver on a device without driver limits")
			}
		}
	}
}
