package scheduling

import (
	"context"
	"slices"

	"github.com/heteroflow/heteroflow/controlplane"
)

// Admission and placement in one write. A task admitted by a tick is
// usually placed by the same tick. Writing its admission (submitted →
// queued) and then its binding (queued → scheduled) would update the task
// twice; on PostgreSQL each update writes a new version of a wide row into
// every index of tasks, the largest share of a placement's database work.
// So a tick holds its admissions of single tasks in memory: the placement
// loop sees those tasks in its queue beside the stored queued ones, and a
// task it binds (or fails, or times out) moves from submitted through
// queued (Transition.Via) in one update that records both events. The held
// admissions left when the tick ends are written as plain admissions, so
// every admitted task is stored as queued before the next tick, as without
// holding. Gang members are admitted at once: they wait across ticks for
// their gang.
type heldAdmissions struct {
	tasks []*controlplane.Task
	trs   map[int64]controlplane.Transition // task → its admission
}

// holdAdmissionLocked keeps t's admission tr for this tick's placement.
func (s *Service) holdAdmissionLocked(t *controlplane.Task, tr controlplane.Transition) {
	if s.held.trs == nil {
		s.held.trs = make(map[int64]controlplane.Transition)
	}
	s.held.tasks = append(s.held.tasks, t)
	s.held.trs[t.ID] = tr
}

// queueWithHeldLocked is the stored queue with the held tasks merged in,
// in the store's queue order (priority, then age, then ID).
func (s *Service) queueWithHeldLocked(queue []*controlplane.Task) []*controlplane.Task {
	if len(s.held.tasks) == 0 {
		return queue
	}
	merged := append(slices.Clip(queue), s.held.tasks...)
	slices.SortStableFunc(merged, func(a, b *controlplane.Task) int {
		switch {
		case a.Spec.Priority != b.Spec.Priority:
			return b.Spec.Priority - a.Spec.Priority
		case !a.CreatedAt.Equal(b.CreatedAt):
			return a.CreatedAt.Compare(b.CreatedAt)
		}
		return int(a.ID - b.ID)
	})
	return merged
}

// throughAdmission turns a move out of queued into one from submitted
// through queued when the task's admission is held.
func (s *Service) throughAdmission(tr controlplane.Transition) controlplane.Transition {
	if adm, ok := s.held.trs[tr.TaskID]; ok {
		tr.From, tr.Via, tr.ViaReason = controlplane.TaskSubmitted, controlplane.TaskQueued, adm.Reason
	}
	return tr
}

// admissionWrittenLocked drops a held admission once a transition carried
// it (or the task left submitted another way).
func (s *Service) admissionWrittenLocked(taskID int64, written bool) {
	if _, ok := s.held.trs[taskID]; !ok {
		return
	}
	delete(s.held.trs, taskID)
	if written {
		s.m.admissions.WithLabelValues(string(controlplane.TaskQueued)).Inc()
	}
}

// flushAdmissionsLocked writes the held admissions no transition carried
// and empties the hold.
func (s *Service) flushAdmissionsLocked(ctx context.Context) error {
	var trs []controlplane.Transition
	for _, t := range s.held.tasks {
		if tr, ok := s.held.trs[t.ID]; ok {
			trs = append(trs, tr)
		}
	}
	s.held = heldAdmissions{}
	return s.admitBatchLocked(ctx, trs)
}
