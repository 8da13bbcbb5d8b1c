package scheduling

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// racingStore cancels one task of the first multi-task bind just before
// the bind reaches the store, as a user's cancel racing the scheduler.
type racingStore struct {
	Store
	once   sync.Once
	victim int64
	calls  []int // bindings per BindTasks call
	mu     sync.Mutex
}

func (r *racingStore) BindTasks(ctx context.Context, bs []controlplane.Binding) ([]*controlplane.Task, error) {
	r.mu.Lock()
	r.calls = append(r.calls, len(bs))
	r.mu.Unlock()
	if len(bs) > 1 {
		r.once.Do(func() {
			r.victim = bs[1].Transition.TaskID
			_, err := r.Store.TransitionTask(ctx, controlplane.Transition{TaskID: r.victim, From: bs[1].Transition.From,
				To: controlplane.TaskCancelled, Reason: "cancelled by the user", Actor: "user"})
			if err != nil {
				panic(err)
			}
		})
	}
	return r.Store.BindTasks(ctx, bs)
}

// TestBindBatch: the placements of one tick bind in one transaction; when a
// task of the batch changes meanwhile, the store refuses the whole batch
// and the others bind one by one, the changed one is taken back out of
// the cluster and nothing of it reaches the ledger.
func TestBindBatch(t *testing.T) {
	for _, tc := range []struct {
		name  string
		race  bool
		tasks int
	}{{"one transaction", false, 6}, {"a task cancelled meanwhile", true, 6}, {"more than one batch", false, bindBatch + 3}} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Config{})
			rs := &racingStore{Store: h.db}
			if !tc.race {
				rs.once.Do(func() {})
			}
			svc := h.serviceOn(rs)
			h.svc = svc
			nodes := (tc.tasks + 7) / 8
			for i := range nodes {
				h.addNode(fmt.Sprintf("n%03d", i), inventory.VendorNVIDIA, "NVIDIA H100 80GB HBM3", 8, 81559)
			}
			require.NoError(t, h.svc.Tick(h.ctx, true))
			ids := make([]int64, tc.tasks)
			for i := range ids {
				ids[i] = h.submit(controlplane.TaskSpec{Name: "b", DeviceCount: 1, ComputePercent: 100, QoS: controlplane.QoSBronze}).ID
			}
			require.NoError(t, h.svc.Tick(h.ctx, false)) // admits and places

			want := map[int]int{}
			for i := 0; i < tc.tasks; i += bindBatch {
				want[min(bindBatch, tc.tasks-i)]++
			}
			rows, err := h.db.ListAllocations(h.ctx, "")
			require.NoError(t, err)
			bound := map[int64]bool{}
			for _, r := range rows {
				bound[r.TaskID] = true
			}
			for _, id := range ids {
				st := h.task(id).State
				if tc.race && id == rs.victim {
					require.Equal(t, controlplane.TaskCancelled, st)
					require.False(t, bound[id], "the cancelled task reached the ledger")
					continue
				}
				require.Equal(t, controlplane.TaskScheduled, st, "task %d", id)
				require.True(t, bound[id], "task %d has no ledger rows", id)
			}
			require.NoError(t, h.svc.snap.cl.CheckInvariants())
			placedN := tc.tasks
			if tc.race {
				placedN--
				// the batch, then each of its tasks alone
				require.Equal(t, append([]int{tc.tasks}, repeat(1, tc.tasks)...), rs.calls)
				require.InDelta(t, 1, testutil.ToFloat64(h.svc.m.bindSplits), 0)
			} else {
				got := map[int]int{}
				for _, n := range rs.calls {
					got[n]++
				}
				require.Equal(t, want, got)
				require.Zero(t, testutil.ToFloat64(h.svc.m.bindSplits))
			}
			require.Len(t, h.svc.snap.placed, placedN)
			require.Equal(t, int64(placedN)*1000, h.svc.snap.cl.Allocated())
		})
	}
}

func repeat(v, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// TestBindBatchCountsQuota: placements waiting in this tick's bind batch
// count against their tenant's quota, so one tick never places past it.
func TestBindBatchCountsQuota(t *testing.T) {
	h := newHarness(t, Config{})
	require.NoError(t, h.db.CreateQuota(h.ctx, &controlplane.Quota{Tenant: "lab", Devices: 2, Policy: controlplane.QuotaQueue}))
	h.addNode("n0", inventory.VendorNVIDIA, "NVIDIA H100 80GB HBM3", 8, 81559)
	require.NoError(t, h.svc.Tick(h.ctx, true))
	var ids []int64
	for range 4 {
		ids = append(ids, h.submit(controlplane.TaskSpec{Name: "q", Tenant: "lab", DeviceCount: 1, ComputePercent: 100,
			QoS: controlplane.QoSBronze}).ID)
	}
	require.NoError(t, h.svc.Tick(h.ctx, false)) // admit
	require.NoError(t, h.svc.Tick(h.ctx, false)) // place
	scheduled := 0
	for _, id := range ids {
		if h.task(id).State == controlplane.TaskScheduled {
			scheduled++
		}
	}
	require.Equal(t, 2, scheduled, "the quota allows two devices")
	require.NoError(t, h.svc.snap.cl.CheckInvariants())
}
