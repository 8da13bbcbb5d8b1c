package scheduling

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/receivers/inventory"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

func TestParseQuietWindow(t *testing.T) {
	t.Parallel()
	w, err := ParseQuietWindow("22:00-06:30")
	require.NoError(t, err)
	require.Equal(t, QuietWindow{22 * 60, 6*60 + 30}, w)
	require.Equal(t, "22:00-06:30", w.String())
	for _, bad := range []string{"22:00", "25:00-01:00", "08:00-08:00", "8h-9h"} {
		_, err := ParseQuietWindow(bad)
		require.Error(t, err, bad)
	}
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	require.NoError(t, err)
	p := DefragPolicy{QuietHours: []QuietWindow{w, {12 * 60, 13 * 60}}, Location: shanghai}
	at := func(h, m int) time.Time { return time.Date(2026, 1, 1, h, m, 0, 0, shanghai).UTC() }
	require.True(t, p.quiet(at(23, 0)), "wraps past midnight")
	require.True(t, p.quiet(at(6, 29)))
	require.False(t, p.quiet(at(6, 30)), "end is exclusive")
	require.True(t, p.quiet(at(12, 0)))
	require.False(t, p.quiet(at(13, 0)))
	require.False(t, p.quiet(at(9, 0)))
}

// devicesUsed lists node n1's devices by used compute (milli), in order.
func devicesUsed(h *harness) []int32 {
	h.svc.mu.Lock()
	defer h.svc.mu.Unlock()
	ni, err := h.svc.snap.cl.Node("n1")
	require.NoError(h.t, err)
	out := make([]int32, len(ni.Devices))
	for i, st := range ni.Devices {
		out[i] = 1000 - st.FreeMilli
	}
	return out
}

// advance moves the clock by d in steps of 20 s (agents heartbeat at each,
// so nodes stay online and runs are not lost).
func advance(h *harness, d time.Duration) {
	for end := h.clk.Now().Add(d); h.clk.Now().Before(end); {
		h.clk.Add(19 * time.Second) // step adds the 20th
		h.step()
	}
}

func fragScore(h *harness) float64 {
	h.svc.mu.Lock()
	defer h.svc.mu.Unlock()
	return deviceStates(h.svc.snap, partitionDemandOf(h.svc.shapes.reqs)).score()
}

// TestDefragPolicyEndToEnd: on simulated nodes with --allow-defrag and a
// policy (threshold, one run a minute, two moves an hour, quiet hours), the
// leader moves restartable Bronze tasks off a partly used device so it
// comes free whole: not in the quiet hours, not past the hourly budget; each
// move is an audit entry and an event on the task with the reason, and the
// fragmentation before and after is in the metrics.
func TestDefragPolicyEndToEnd(t *testing.T) {
	t.Parallel()
	quiet, err := ParseQuietWindow("00:00-00:05")
	require.NoError(t, err)
	h := newHarness(t, Config{AllowDefrag: true, Defrag: DefragPolicy{Threshold: 0.2, MaxMovesPerHour: 2,
		QuietHours: []QuietWindow{quiet}, Interval: time.Minute}})
	h.addNode("n1", inventory.VendorNVIDIA, "Tesla T4", 4, 15360)
	// Long and short quarter-device Bronze tasks, alternating: packed two
	// by two, the short ones end and leave two devices half used.
	var long []*controlplane.Task
	for i := range 8 {
		d := "3"
		if i%2 == 0 {
			d = "1000000"
		}
		tk := h.submit(controlplane.TaskSpec{Name: "b" + strconv.Itoa(i), DeviceCount: 1, MemoryMiB: 1024, ComputePercent: 25,
			QoS: controlplane.QoSBronze, Labels: map[string]string{"duration": d}})
		if i%2 == 0 {
			long = append(long, tk)
		}
	}
	for range 8 {
		h.step()
	}
	for _, tk := range long {
		require.Equal(t, controlplane.TaskRunning, h.task(tk.ID).State)
	}
	require.ElementsMatch(t, []int32{500, 500, 0, 0}, devicesUsed(h), "two half-used devices")
	before := fragScore(h)
	require.InDelta(t, 1000.0/3000, before, 1e-9, "1,000 of 3,000 free milli stranded")
	ans, err := h.svc.PlanDefrag(h.ctx)
	require.NoError(t, err)
	require.Equal(t, DefragPolicyView{Automatic: true, Threshold: 0.2, MaxMovesPerHour: 2, QuietHours: []string{"00:00-00:05"},
		TimeZone: "UTC", QuietNow: true}, ans.Policy)
	require.Len(t, ans.Plan.Freed, 1)
	require.Len(t, ans.Plan.Freed[0].Moves, 2)
	require.InDelta(t, before, ans.Plan.ScoreBefore, 1e-9)
	require.Zero(t, ans.Plan.ScoreAfter)
	runs := func(result string) float64 { return testutil.ToFloat64(h.svc.m.defragRuns.WithLabelValues(result)) }

	// Quiet hours (00:00-00:05 UTC): the policy holds back.
	require.Positive(t, runs("quiet_hours"))
	require.Zero(t, testutil.ToFloat64(h.svc.m.defragMoves.WithLabelValues("policy")))

	// After the quiet hours: one run moves the two tasks of one device.
	advance(h, 5*time.Minute)
	for range 8 {
		h.step()
	}
	require.Equal(t, 1.0, runs("executed"), "nothing_movable %v below %v quiet %v", runs("nothing_movable"), runs("below_threshold"), runs("quiet_hours"))
	require.Equal(t, 2.0, testutil.ToFloat64(h.svc.m.defragMoves.WithLabelValues("policy")))
	require.ElementsMatch(t, []int32{1000, 0, 0, 0}, devicesUsed(h), "a whole device came free")
	after := fragScore(h)
	require.Zero(t, after)
	require.InDelta(t, before, testutil.ToFloat64(h.svc.m.defragScore.WithLabelValues("before")), 1e-9)
	require.Zero(t, testutil.ToFloat64(h.svc.m.defragScore.WithLabelValues("after_planned")))
	require.Zero(t, testutil.ToFloat64(h.svc.m.frag), "the live fragmentation gauge after the move")

	// Every move: an audit entry, and an event with the reason on the task.
	h.auditMu.Lock()
	var moves []*controlplane.AuditEntry
	for _, e := range h.audited {
		if e.Action == auditDefragMove {
			moves = append(moves, e)
		}
	}
	h.auditMu.Unlock()
	require.Len(t, moves, 2)
	movedTasks := 0
	for _, tk := range long {
		evs, err := h.db.ListTaskEvents(h.ctx, tk.ID)
		require.NoError(t, err)
		for _, e := range evs {
			if e.To == controlplane.TaskQueued && strings.HasPrefix(e.Reason, "defragmentation: moved off n1 device #") {
				movedTasks++
				var det defragMoveDetail
				found := false
				for _, m := range moves {
					if m.Target == "task/"+strconv.FormatInt(tk.ID, 10) {
						require.NoError(t, json.Unmarshal([]byte(m.Detail), &det))
						found = true
					}
				}
				require.True(t, found, "task %d moved without an audit entry", tk.ID)
				require.Equal(t, "policy", det.Trigger)
				require.InDelta(t, before, det.ScoreBefore, 1e-9)
			}
		}
		require.Equal(t, controlplane.TaskRunning, h.task(tk.ID).State, "moved tasks run again")
	}
	require.Equal(t, 2, movedTasks)

	// Fragment again: the hourly budget (2) is spent, so the policy waits.
	for i := range 8 {
		d := "3"
		if i%2 == 0 {
			d = "1000000"
		}
		h.submit(controlplane.TaskSpec{Name: "c" + strconv.Itoa(i), DeviceCount: 1, MemoryMiB: 1024, ComputePercent: 25,
			QoS: controlplane.QoSBronze, Labels: map[string]string{"duration": d}})
	}
	for range 8 {
		h.step()
	}
	require.ElementsMatch(t, []int32{1000, 500, 500, 0}, devicesUsed(h), "fragmented again")
	advance(h, time.Minute)
	require.Positive(t, runs("rate_limited"))
	require.Equal(t, 2.0, testutil.ToFloat64(h.svc.m.defragMoves.WithLabelValues("policy")))

	// An hour later the budget is back.
	advance(h, time.Hour)
	for range 8 {
		h.step()
	}
	require.Equal(t, 4.0, testutil.ToFloat64(h.svc.m.defragMoves.WithLabelValues("policy")))
	require.ElementsMatch(t, []int32{1000, 1000, 0, 0}, devicesUsed(h))
	require.Zero(t, fragScore(h))
}

// Without --allow-defrag the policy never moves anything.
func TestDefragPolicyNeedsAllowDefrag(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{Defrag: DefragPolicy{Threshold: 0.1, Interval: time.Second}})
	h.addNode("n1", inventory.VendorNVIDIA, "Tesla T4", 2, 15360)
	for i := range 4 {
		d := "3"
		if i%2 == 0 {
			d = "1000000"
		}
		h.submit(controlplane.TaskSpec{Name: "b" + strconv.Itoa(i), DeviceCount: 1, MemoryMiB: 1024, ComputePercent: 25,
			QoS: controlplane.QoSBronze, Labels: map[string]string{"duration": d}})
	}
	for range 10 {
		h.step()
	}
	require.Zero(t, testutil.ToFloat64(h.svc.m.defragMoves.WithLabelValues("policy")))
}

func TestDefragPolicyValidation(t *testing.T) {
	t.Parallel()
	for _, p := range []DefragPolicy{{Threshold: 1.5}, {Threshold: -0.1}, {MaxMovesPerHour: -1}, {Interval: -time.Second}} {
		c := Config{Defrag: p}
		require.Error(t, c.fill(), "%+v", p)
	}
	c := Config{Defrag: DefragPolicy{Threshold: 0.4}}
	require.NoError(t, c.fill())
	require.Equal(t, time.Minute, c.Defrag.Interval)
}

// The planner frees a device only if fragmentation against the recent
// workload (slicing rules) does not grow. Device 0 holds 400 milli, device 1
// 200 milli: emptying device 1 onto device 0 leaves 400 and 1000 free.
//   - workload {200}: both devices take 200 before and after → F stays 0,
//     the move is planned (score 1 → 400/1400);
//   - workload {200, 400, 600} (⅓ each): afterwards device 0's 400 free
//     cannot take 600 while device 1 can → F = ⅓ · 400 = 133.3 milli
//     = 6.67 % of 2,000 → the move would strand capacity, not planned.
func TestDefragPlanKeepsWorkloadFragmentation(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{})
	h.addNode("n1", inventory.VendorNVIDIA, "Tesla T4", 2, 15360)
	for _, x := range []struct {
		pct int
		dur string
	}{{40, "1000000"}, {60, "3"}, {20, "1000000"}} {
		h.submit(controlplane.TaskSpec{Name: "t", DeviceCount: 1, MemoryMiB: 1024, ComputePercent: x.pct,
			QoS: controlplane.QoSBronze, Labels: map[string]string{"duration": x.dur}})
	}
	for range 8 {
		h.step()
	}
	require.Equal(t, []int32{400, 200}, devicesUsed(h))
	shape := func(pct float64) model.Request {
		r := model.Request{DeviceCount: 1, ComputePercent: pct, MemoryMiB: 1024, QoS: model.QoSBronze}
		require.NoError(t, r.Normalize())
		return r
	}
	sn, err := h.svc.freshSnapshot(h.ctx)
	require.NoError(t, err)
	p := planDefrag(sn, []model.Request{shape(20)})
	require.Len(t, p.Freed, 1)
	require.Equal(t, 1, p.Freed[0].Device)
	require.InDelta(t, 1.0, p.ScoreBefore, 1e-9)
	require.InDelta(t, 400.0/1400, p.ScoreAfter, 1e-9)
	require.Zero(t, p.WorkloadFragBefore)
	require.Zero(t, p.WorkloadFragAfter)

	sn, err = h.svc.freshSnapshot(h.ctx)
	require.NoError(t, err)
	p = planDefrag(sn, []model.Request{shape(20), shape(40), shape(60)})
	require.Empty(t, p.Freed, "the move would strand 400 milli for the 600-milli shape")
	require.Zero(t, p.WorkloadFragBefore)
	require.Zero(t, p.WorkloadFragAfter, "the snapshot is left as it was")
	require.InDelta(t, 1.0, p.ScoreAfter, 1e-9)
}

// A new leader reads the moves of the last hour back from the audit log,
// so a failover does not reset the hourly budget.
func TestDefragBudgetSurvivesFailover(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{AllowDefrag: true, Defrag: DefragPolicy{Threshold: 0.2, MaxMovesPerHour: 3}})
	now := h.clk.Now()
	for _, ago := range []time.Duration{90 * time.Minute, 40 * time.Minute, 10 * time.Minute} {
		require.NoError(t, h.db.AppendAudit(h.ctx, &controlplane.AuditEntry{At: now.Add(-ago), Actor: "scheduler",
			Module: controlplane.ModuleScheduler, Level: controlplane.LevelInfo, Action: auditDefragMove, Target: "task/1", Result: "requeued"}))
	}
	// Another action that mentions the move's name is not a move.
	require.NoError(t, h.db.AppendAudit(h.ctx, &controlplane.AuditEntry{At: now.Add(-5 * time.Minute), Actor: "scheduler",
		Module: controlplane.ModuleScheduler, Level: controlplane.LevelInfo, Action: auditDefragRun, Target: "cluster",
		Result: "executed", Detail: auditDefragMove}))
	h.svc.mu.Lock()
	defer h.svc.mu.Unlock()
	require.Equal(t, 1, h.svc.budgetLocked(h.ctx, now), "3 an hour, 2 moved in the last hour")
	require.Equal(t, 2, h.svc.budgetLocked(h.ctx, now.Add(21*time.Minute)), "the one 40 minutes ago has left the hour")
}

// Partition room that a demanded MIG profile can still take is not
// stranded in the fragmentation score; room none can take is. One
// A100-80GB and one whole free one: a Gold 43 % / 40 GiB task takes
// 4g.40gb (slots 0-3, 4 of 7 compute slices: 571 milli), leaving 429 milli.
//   - recent demand 1g.10gb (14 %, 10 GiB): fits at slot 4 → not stranded,
//     score 0 / 1,429 = 0;
//   - recent demand 40 % / 40 GiB (3g.40gb: 3 more compute slices make 7,
//     slots 4-7 free) → 0;
//   - recent demand 50 % / 40 GiB (only 4g.40gb or 7g, both start at slot
//     0, taken) → stranded: 429 / 1,429.
func TestFragmentationScoreCountsPartitionRoom(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{})
	h.addNode("n1", inventory.VendorNVIDIA, "NVIDIA A100-SXM4-80GB", 2, 81920)
	h.submit(controlplane.TaskSpec{Name: "g", DeviceCount: 1, MemoryMiB: 40960, ComputePercent: 43, QoS: controlplane.QoSGold,
		Labels: map[string]string{"duration": "1000000"}})
	for range 4 {
		h.step()
	}
	sn, err := h.svc.freshSnapshot(h.ctx)
	require.NoError(t, err)
	ni, err := sn.cl.Node("n1")
	require.NoError(t, err)
	var used []int32
	for _, st := range ni.Devices {
		used = append(used, 1000-st.FreeMilli)
	}
	require.ElementsMatch(t, []int32{571, 0}, used, "4g.40gb on one GPU")
	gold := func(pct float64, mem int64) model.Request {
		r := model.Request{DeviceCount: 1, ComputePercent: pct, MemoryMiB: mem, QoS: model.QoSGold}
		require.NoError(t, r.Normalize())
		return r
	}
	require.InDelta(t, 429.0/1429, deviceStates(sn, nil).score(), 1e-9, "no demand: FGD's view")
	require.Zero(t, deviceStates(sn, partitionDemandOf([]model.Request{gold(14, 10240)})).score())
	require.Zero(t, deviceStates(sn, partitionDemandOf([]model.Request{gold(40, 40960)})).score())
	require.InDelta(t, 429.0/1429, deviceStates(sn, partitionDemandOf([]model.Request{gold(50, 40960)})).score(), 1e-9)
	// Bronze demand never makes partition room usable.
	bronze := model.Request{DeviceCount: 1, ComputePercent: 10, MemoryMiB: 1024, QoS: model.QoSBronze}
	require.NoError(t, bronze.Normalize())
	require.InDelta(t, 429.0/1429, deviceStates(sn, partitionDemandOf([]model.Request{bronze})).score(), 1e-9)
}
