package scheduling

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/scheduler/framework"
	"github.com/heteroflow/heteroflow/scheduler/model"
	"github.com/heteroflow/heteroflow/scheduler/plugins"
)

// whyDoc answers "why pending" for one task from its last failed cycle; it
// is stored as JSON (task_schedule.why) and served as is.
type whyDoc struct {
	TaskID  int64     `json:"task_id"`
	At      time.Time `json:"at"`
	Summary string    `json:"summary"`
	// NeverFits says why no node of the cluster could ever hold the task
	// (it waits for new nodes, not for running work to end); empty when
	// it only waits for resources in use now.
	NeverFits     string                 `json:"never_fits,omitempty"`
	TotalNodes    int                    `json:"total_nodes"`
	ByReason      map[string]int         `json:"by_reason,omitempty"`
	Nodes         []framework.NodeStatus `json:"nodes,omitempty"`
	Quota         string                 `json:"quota,omitempty"`
	Gang          *gangWhy               `json:"gang,omitempty"`
	Preemption    *preemptWhy            `json:"preemption,omitempty"`
	Held          *heldWhy               `json:"held,omitempty"`
	Attempts      int                    `json:"attempts"`
	NextAttemptAt *time.Time             `json:"next_attempt_at,omitempty"`
}

type gangWhy struct {
	Name     string `json:"name"`
	Reserved int    `json:"reserved"`
	Size     int    `json:"size"`
}

type preemptWhy struct {
	Mode    string  `json:"mode"`
	Node    string  `json:"node,omitempty"`
	Victims []int64 `json:"victims,omitempty"`
}

// heldWhy is the placement a held task (gang member) already has.
type heldWhy struct {
	Node   string        `json:"node"`
	Slices []model.Slice `json:"slices"`
}

func (d whyDoc) marshal() (json.RawMessage, error) { return json.Marshal(d) }

// unschedulableLocked records why, backs off, and acts on a preemption
// proposal.
func (s *Service) unschedulableLocked(ctx context.Context, t *controlplane.Task, req *model.Request, res framework.Result) error {
	s.m.attempts.WithLabelValues("unschedulable").Inc()
	s.backoffLocked(t.ID)
	d := whyDoc{Summary: "no node fits"}
	if dg := res.Diagnosis; dg != nil {
		d.Summary, d.TotalNodes, d.ByReason, d.Nodes = dg.Summary(), dg.Total, dg.ByReason, dg.Nodes
		for reason := range dg.ByReason {
			s.m.reasons.WithLabelValues(reason).Inc()
		}
	}
	if s.snap != nil && s.snap.cl != nil {
		d.NeverFits = neverFits(s.snap.cl.Nodes, t.Spec)
	}
	if p, ok := s.fw.Plugin(plugins.NameQuota); ok {
		d.Quota = p.(*plugins.Quota).LastReason()
	}
	if p, ok := s.fw.Plugin(plugins.NamePreempt); ok {
		pr := p.(*plugins.Preempt)
		d.Preemption = &preemptWhy{Mode: pr.Mode()}
		prop := pr.Take()
		if waiting := s.drainingVictimsLocked(t.ID); len(waiting) > 0 {
			// This task already displaced work that is still stopping: wait
			// for those devices rather than displacing more (smallest set).
			d.Preemption.Victims = waiting
			prop = nil
		}
		if prop != nil && res.Nominated != "" {
			victims, err := s.preemptLocked(ctx, t, prop)
			if err != nil {
				return err
			}
			d.Preemption.Node, d.Preemption.Victims = prop.Node, victims
			// Retry as soon as the victims' devices are released.
			s.backoff[t.ID] = s.now()
		}
	}
	return s.recordWhyLocked(ctx, t, d)
}

// recordWhyLocked stores the why document with the backoff state.
func (s *Service) recordWhyLocked(ctx context.Context, t *controlplane.Task, d whyDoc) error {
	now := s.now()
	d.TaskID, d.At, d.Attempts = t.ID, now, s.attempts[t.ID]
	ts, err := s.store.GetTaskSchedule(ctx, t.ID)
	if errors.Is(err, controlplane.ErrNotFound) {
		ts, err = &controlplane.TaskSchedule{TaskID: t.ID}, nil
	}
	if err != nil {
		return err
	}
	if next, ok := s.backoff[t.ID]; ok {
		d.NextAttemptAt = &next
		ts.NextAttemptAt = next
	}
	doc, err := d.marshal()
	if err != nil {
		return err
	}
	ts.Attempts, ts.Why, ts.WhyAt = s.attempts[t.ID], doc, &now
	return s.store.PutTaskSchedule(ctx, ts)
}

// failLocked ends a task that can never be placed.
func (s *Service) failLocked(ctx context.Context, t *controlplane.Task, _ *model.Request, reason string) error {
	if err := s.markFinal(ctx, t.ID, reason); err != nil {
		return err
	}
	_, err := s.store.TransitionTask(ctx, s.throughAdmission(controlplane.Transition{TaskID: t.ID, From: t.State,
		To: controlplane.TaskFailed, Reason: reason, Actor: "scheduler"}))
	if err != nil && !errors.Is(err, controlplane.ErrConflict) {
		return err
	}
	s.admissionWrittenLocked(t.ID, err == nil)
	return nil
}

// timeoutQueuedLocked ends a task that waited longer than QueueTimeout.
func (s *Service) timeoutQueuedLocked(ctx context.Context, t *controlplane.Task) error {
	reason := "queued longer than " + s.cfg.QueueTimeout.String()
	if err := s.markFinal(ctx, t.ID, reason); err != nil {
		return err
	}
	_, err := s.store.TransitionTask(ctx, s.throughAdmission(controlplane.Transition{TaskID: t.ID, From: controlplane.TaskQueued,
		To: controlplane.TaskTimedOut, Reason: reason, Actor: "scheduler"}))
	if err != nil && !errors.Is(err, controlplane.ErrConflict) {
		return err
	}
	s.admissionWrittenLocked(t.ID, err == nil)
	return nil
}

// expireGangsLocked gives up gangs not complete within the timeout: their
// assumed placements leave the cluster and every member backs off.
func (s *Service) expireGangsLocked(ctx context.Context) error {
	g := s.gang()
	if g == nil {
		return nil
	}
	for _, name := range g.Expired() {
		reserved, size := g.Progress(name)
		if err := s.dropGangLocked(ctx, name, &gangWhy{Name: name, Reserved: reserved, Size: size},
			"gang timed out: only part of it could be placed within "+g.Timeout().String()); err != nil {
			return err
		}
	}
	return nil
}

func (s *Service) dropGangLocked(ctx context.Context, name string, gw *gangWhy, why string) error {
	members := s.waiting[name]
	delete(s.waiting, name)
	if g := s.gang(); g != nil {
		g.Drop(name)
	}
	for _, m := range members {
		_ = s.snap.cl.Release(m.placement.TaskID)
		s.backoffLocked(m.task.ID)
		if err := s.recordWhyLocked(ctx, m.task, whyDoc{Summary: why, Gang: gw}); err != nil {
			return err
		}
	}
	return nil
}

// dropWaitingLocked gives up every held gang (before a rebuild).
func (s *Service) dropWaitingLocked(ctx context.Context, why string) error {
	for name := range s.waiting {
		if err := s.dropGangLocked(ctx, name, nil, why); err != nil {
			return err
		}
	}
	return nil
}
