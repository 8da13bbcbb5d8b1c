package scheduling

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
)

// DefragPolicy is when the leader defragments on its own (with AllowDefrag):
// every Interval it plans (planDefrag) and, when the fragmentation score is
// at least Threshold, outside the quiet hours and within the hourly move
// budget, requeues the plan's restartable Bronze tasks so that whole devices
// come free. Threshold 0 turns the automatic runs off (POST
// /scheduler/defrag still executes a plan by hand).
type DefragPolicy struct {
	// Threshold is the fragmentation score (share of free compute stranded
	// on partly used devices, 0..1) at or above which a run moves tasks.
	Threshold float64
	// MaxMovesPerHour bounds the moves (requeued tasks) of any sliding
	// hour, automatic and by hand together; a device is freed only when
	// all of its moves fit the budget left.
	MaxMovesPerHour int
	// QuietHours are daily windows without automatic moves.
	QuietHours []QuietWindow
	// Location is the time zone of the quiet hours (nil = UTC).
	Location *time.Location
	// Interval is how often the leader considers a run (default 1 min).
	Interval time.Duration
}

// QuietWindow is a daily window [Start, End) in minutes after midnight; an
// End before Start wraps past midnight ("22:00-06:00").
type QuietWindow struct{ Start, End int }

func (w QuietWindow) String() string {
	return fmt.Sprintf("%02d:%02d-%02d:%02d", w.Start/60, w.Start%60, w.End/60, w.End%60)
}

// ParseQuietWindow reads "HH:MM-HH:MM".
func ParseQuietWindow(s string) (QuietWindow, error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), "-")
	if !ok {
		return QuietWindow{}, fmt.Errorf("quiet hours %q: want HH:MM-HH:MM", s)
	}
	start, err1 := minuteOfDay(a)
	end, err2 := minuteOfDay(b)
	if err := errors.Join(err1, err2); err != nil {
		return QuietWindow{}, fmt.Errorf("quiet hours %q: %w", s, err)
	}
	if start == end {
		return QuietWindow{}, fmt.Errorf("quiet hours %q: start and end are the same", s)
	}
	return QuietWindow{start, end}, nil
}

func minuteOfDay(s string) (int, error) {
	t, err := time.Parse("15:04", strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("%q is not HH:MM", s)
	}
	return t.Hour()*60 + t.Minute(), nil
}

// quiet reports whether t falls in one of the policy's quiet windows.
func (p *DefragPolicy) quiet(t time.Time) bool {
	loc := p.Location
	if loc == nil {
		loc = time.UTC
	}
	lt := t.In(loc)
	m := lt.Hour()*60 + lt.Minute()
	for _, w := range p.QuietHours {
		if w.Start < w.End && m >= w.Start && m < w.End {
			return true
		}
		if w.Start > w.End && (m >= w.Start || m < w.End) {
			return true
		}
	}
	return false
}

func (p *DefragPolicy) validate() error {
	switch {
	case p.Threshold < 0 || p.Threshold > 1:
		return fmt.Errorf("scheduling: defrag threshold %v must be between 0 and 1", p.Threshold)
	case p.MaxMovesPerHour < 0:
		return fmt.Errorf("scheduling: defrag max moves per hour must not be negative")
	case p.Interval < 0:
		return fmt.Errorf("scheduling: defrag interval must not be negative")
	}
	if p.Interval == 0 {
		p.Interval = time.Minute
	}
	return nil
}

// defragState is the leader's memory of its defragmentation runs.
type defragState struct {
	lastRun time.Time
	moves   []time.Time // moves of the last hour, oldest first
	seeded  bool        // moves read back from the audit log this leadership
}

// budgetLocked is how many moves the hourly limit still allows at now
// (unlimited when MaxMovesPerHour is 0). The window is read back from the
// audit log once per leadership, so a failover does not reset it.
func (s *Service) budgetLocked(ctx context.Context, now time.Time) int {
	limit := s.cfg.Defrag.MaxMovesPerHour
	if limit == 0 {
		return int(^uint(0) >> 1)
	}
	if !s.defrag.seeded {
		since := now.Add(-time.Hour)
		prev, _, err := s.store.ListAudit(ctx, controlplane.AuditFilter{Module: controlplane.ModuleScheduler, Actor: "scheduler",
			Query: auditDefragMove, Since: &since, Page: controlplane.Page{Limit: 2 * limit}}) // each run entry (matched too) has ≥ 1 move
		if err != nil {
			s.log.Warn("scheduling: defrag moves of the last hour not read back", "err", err)
		} else {
			s.defrag.moves = s.defrag.moves[:0]
			for _, e := range prev {
				if e.Action == auditDefragMove {
					s.defrag.moves = append(s.defrag.moves, e.At)
				}
			}
			sort.Slice(s.defrag.moves, func(i, j int) bool { return s.defrag.moves[i].Before(s.defrag.moves[j]) })
			s.defrag.seeded = true
		}
	}
	cut := 0
	for cut < len(s.defrag.moves) && !s.defrag.moves[cut].After(now.Add(-time.Hour)) {
		cut++
	}
	s.defrag.moves = s.defrag.moves[cut:]
	return max(0, limit-len(s.defrag.moves))
}

// Audit actions of defragmentation.
const (
	auditDefragMove = "scheduler.defrag.move"
	auditDefragRun  = "scheduler.defrag.run"
)

// defragMoveDetail is the audit detail of one move.
type defragMoveDetail struct {
	Trigger     string  `json:"trigger"` // "policy" or "manual"
	FromNode    string  `json:"from_node"`
	FromDevice  int     `json:"from_device_index"`
	ToNode      string  `json:"planned_node"`
	ToDevice    int     `json:"planned_device_index"`
	ScoreBefore float64 `json:"score_before"`
	ScoreAfter  float64 `json:"score_after_planned"`
}

// executePlanLocked requeues the moves of p's freed devices, whole devices
// only, at most budget moves; each move is audited and its reason is on the
// task's event. Returns the requeued tasks.
func (s *Service) executePlanLocked(ctx context.Context, p *DefragPlan, budget int, trigger string) ([]int64, error) {
	var moved []int64
	now := s.now()
	for _, fd := range p.Freed {
		if len(fd.Moves) > budget-len(moved) {
			continue // a device half emptied frees nothing
		}
		for _, m := range fd.Moves {
			pl, ok := s.snap.placed[m.TaskID]
			if !ok || pl.draining {
				continue
			}
			from := controlplane.TaskScheduled
			if pl.running {
				from = controlplane.TaskRunning
			}
			reason := fmt.Sprintf("defragmentation: moved off %s device #%d to free it whole (fragmentation %.2f → %.2f planned)",
				fd.Node, fd.Device, p.ScoreBefore, p.ScoreAfter)
			if err := s.requeueLocked(ctx, m.TaskID, from, reason); err != nil {
				if errors.Is(err, controlplane.ErrConflict) {
					continue
				}
				return moved, err
			}
			pl.draining, pl.since = true, now
			// The moved task waits until its old slices are released (a
			// release clears every backoff) or the drain times out, so it
			// cannot land back on the device being emptied.
			s.backoff[m.TaskID] = now.Add(s.cfg.DrainTimeout)
			moved = append(moved, m.TaskID)
			s.defrag.moves = append(s.defrag.moves, now)
			s.m.defragMoves.WithLabelValues(trigger).Inc()
			det, _ := json.Marshal(defragMoveDetail{Trigger: trigger, FromNode: fd.Node, FromDevice: fd.Device, ToNode: m.ToNode,
				ToDevice: m.ToDevice, ScoreBefore: p.ScoreBefore, ScoreAfter: p.ScoreAfter})
			s.emitAudit(&controlplane.AuditEntry{At: now, Actor: "scheduler", Module: controlplane.ModuleScheduler, Level: controlplane.LevelInfo,
				Action: auditDefragMove, Target: "task/" + strconv.FormatInt(m.TaskID, 10), Result: "requeued", Detail: string(det)})
		}
	}
	sort.Slice(moved, func(i, j int) bool { return moved[i] < moved[j] })
	return moved, nil
}

// emitAudit sends e to the audit sink, or the debug log without one.
func (s *Service) emitAudit(e *controlplane.AuditEntry) {
	if s.audit != nil {
		s.audit(e)
		return
	}
	s.log.Debug("scheduling audit", "action", e.Action, "target", e.Target, "detail", e.Detail)
}

// autoDefragLocked is the policy's run, once per Interval on the leader.
func (s *Service) autoDefragLocked(ctx context.Context) error {
	pol := &s.cfg.Defrag
	if !s.cfg.AllowDefrag || pol.Threshold <= 0 {
		return nil
	}
	now := s.now()
	if !s.defrag.lastRun.IsZero() && now.Sub(s.defrag.lastRun) < pol.Interval {
		return nil
	}
	s.defrag.lastRun = now
	if pol.quiet(now) {
		s.m.defragRuns.WithLabelValues("quiet_hours").Inc()
		return nil
	}
	score := deviceStates(s.snap, partitionDemandOf(s.shapes.reqs)).score()
	if score < pol.Threshold {
		s.m.defragRuns.WithLabelValues("below_threshold").Inc()
		return nil
	}
	budget := s.budgetLocked(ctx, now)
	if budget == 0 {
		s.m.defragRuns.WithLabelValues("rate_limited").Inc()
		return nil
	}
	sn, err := s.freshSnapshot(ctx)
	if err != nil {
		return err
	}
	p := planDefrag(sn, s.shapes.reqs)
	moved, err := s.executePlanLocked(ctx, &p, budget, "policy")
	if err != nil {
		return err
	}
	result := "executed"
	if len(moved) == 0 {
		result = "nothing_movable"
	}
	s.m.defragRuns.WithLabelValues(result).Inc()
	s.m.defragScore.WithLabelValues("before").Set(p.ScoreBefore)
	s.m.defragScore.WithLabelValues("after_planned").Set(p.ScoreAfter)
	if len(moved) > 0 {
		det, _ := json.Marshal(map[string]any{"trigger": "policy", "score_before": p.ScoreBefore, "score_after_planned": p.ScoreAfter,
			"workload_fragmentation_before": p.WorkloadFragBefore, "workload_fragmentation_after_planned": p.WorkloadFragAfter,
			"threshold": pol.Threshold, "requeued": moved, "budget_left": budget - len(moved)})
		s.emitAudit(&controlplane.AuditEntry{At: now, Actor: "scheduler", Module: controlplane.ModuleScheduler, Level: controlplane.LevelInfo,
			Action: auditDefragRun, Target: "cluster", Result: "executed", Detail: string(det)})
		s.log.Info("scheduling: defragmentation moved tasks", "requeued", len(moved), "score_before", p.ScoreBefore, "score_after_planned", p.ScoreAfter)
	}
	return nil
}
