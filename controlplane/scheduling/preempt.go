package scheduling

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/scheduler/plugins"
)

// victimInfo tells the Preempt plugin about a placed task.
func (s *Service) victimInfo(id string) (plugins.VictimMeta, bool) {
	tid, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return plugins.VictimMeta{}, false
	}
	p, ok := s.snap.placed[tid]
	if !ok {
		return plugins.VictimMeta{}, false // gang members held at Permit are not bound: never victims
	}
	return plugins.VictimMeta{Priority: p.priority, QoS: p.qos, Running: p.running, Protected: p.draining || p.gang}, true
}

// preemptLocked requeues the victims of a proposal with a recorded reason.
// Their retry budget is untouched (no Retry) and their ledger rows stay,
// draining, until the agent confirms the stop; the preemptor is placed then.
func (s *Service) preemptLocked(ctx context.Context, by *controlplane.Task, prop *plugins.Proposal) ([]int64, error) {
	var out []int64
	now := s.now()
	for _, v := range prop.Victims {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, err
		}
		p, ok := s.snap.placed[id]
		if !ok {
			continue
		}
		from := controlplane.TaskScheduled
		if p.running {
			from = controlplane.TaskRunning
		}
		reason := fmt.Sprintf("preempted by task %d (priority %d > %d, %s) on node %s", by.ID, by.Spec.Priority,
			p.priority, by.Spec.QoS, prop.Node)
		if err := s.requeueLocked(ctx, id, from, reason); err != nil {
			if errors.Is(err, controlplane.ErrConflict) {
				continue // it ended meanwhile: its capacity comes back anyway
			}
			return nil, err
		}
		p.draining, p.since = true, now
		out = append(out, id)
		s.m.preemptions.Inc()
	}
	s.log.Info("scheduling: preempted", "by", by.ID, "node", prop.Node, "victims", out)
	if len(out) > 0 {
		s.preempted[by.ID] = out
	}
	return out, nil
}

// drainingVictimsLocked lists the victims task id displaced that still hold
// their devices (draining until their agents confirm the stop). Once all
// are gone the record is dropped and the task may preempt again.
func (s *Service) drainingVictimsLocked(id int64) []int64 {
	var still []int64
	for _, v := range s.preempted[id] {
		if p, ok := s.snap.placed[v]; ok && p.draining {
			still = append(still, v)
		}
	}
	if len(still) == 0 {
		delete(s.preempted, id)
	}
	return still
}

// requeueLocked moves a placed task back to queued (its state may have
// moved from scheduled to running since the last reconcile: tried both)
// and counts the preemption.
func (s *Service) requeueLocked(ctx context.Context, id int64, from controlplane.TaskState, reason string) error {
	tr := controlplane.Transition{TaskID: id, From: from, To: controlplane.TaskQueued, Reason: reason, Actor: "scheduler"}
	_, err := s.store.RequeueTask(ctx, tr)
	if errors.Is(err, controlplane.ErrConflict) && from == controlplane.TaskScheduled {
		tr.From = controlplane.TaskRunning
		_, err = s.store.RequeueTask(ctx, tr)
	}
	if err != nil {
		return err
	}
	ts, gerr := s.store.GetTaskSchedule(ctx, id)
	if errors.Is(gerr, controlplane.ErrNotFound) {
		ts, gerr = &controlplane.TaskSchedule{TaskID: id}, nil
	}
	if gerr != nil {
		return gerr
	}
	ts.Preemptions++
	return s.store.PutTaskSchedule(ctx, ts)
}
