package scheduling

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
)

// releaseLocked deletes ledger rows of attempts that ended and frees them,
// and frees drained runs of stopped (preempted) tasks. It reports whether
// any capacity came back.
func (s *Service) releaseLocked(ctx context.Context) (bool, error) {
	keys, err := s.store.ReleaseStale(ctx)
	if err != nil {
		return false, err
	}
	freed := false
	for _, k := range keys {
		if p, ok := s.snap.placed[k.TaskID]; ok && p.key == k {
			freed = s.snap.release(k.TaskID) || freed
			s.m.releases.WithLabelValues("ended").Inc()
		}
	}
	now := s.now()
	for id, p := range s.snap.placed {
		if !p.draining || !s.drained(p, now) {
			continue
		}
		if err := s.store.ReleaseAllocations(ctx, p.key); err != nil {
			return freed, err
		}
		s.snap.release(id)
		s.m.releases.WithLabelValues("drained").Inc()
		freed = true
	}
	return freed, nil
}

// drained: the agent's heartbeat since the stop no longer lists the run,
// the node is offline, or the drain timeout passed.
func (s *Service) drained(p *placed, now time.Time) bool {
	if now.Sub(p.since) >= s.cfg.DrainTimeout {
		return true
	}
	e, ok := s.snap.nodes[p.node]
	if !ok || e.node.State != controlplane.NodeOnline {
		return true
	}
	hb := e.node.LastHeartbeat
	return hb != nil && hb.After(p.since) && !running(e.node)[p.key]
}

// reconcileLocked compares placed tasks with their nodes and agents:
// timeouts, tasks never started, lost nodes, runs the agent no longer has.
func (s *Service) reconcileLocked(ctx context.Context) error {
	tasks, err := s.store.ListTasksByState(ctx, []controlplane.TaskState{controlplane.TaskScheduled, controlplane.TaskRunning}, 0)
	if err != nil {
		return err
	}
	now := s.now()
	unaccounted := 0
	for _, t := range tasks {
		p, inLedger := s.snap.placed[t.ID]
		if inLedger && p.key.Attempt == t.Attempt {
			p.running = t.State == controlplane.TaskRunning
		} else {
			unaccounted++ // placed outside the scheduler (manual assign): not in the ledger
		}
		var e *nodeEntry
		if en, ok := s.snap.nodes[t.NodeID]; ok {
			e = en
		}
		tr, requeue := s.verdict(t, e, now)
		if tr == nil {
			continue
		}
		tr.TaskID, tr.From, tr.Actor = t.ID, t.State, "scheduler"
		if requeue {
			_, err = s.store.RequeueTask(ctx, *tr)
			if err == nil && inLedger {
				p.draining, p.since = true, now
			}
		} else {
			_, err = s.store.TransitionTask(ctx, *tr)
		}
		if err != nil && !errors.Is(err, controlplane.ErrConflict) {
			return err
		}
		s.log.Info("scheduling: reconciled task", "task", t.ID, "node", t.NodeID, "to", tr.To, "reason", tr.Reason)
	}
	s.m.unaccounted.Set(float64(unaccounted))
	return nil
}

// verdict decides what happens to one placed task (nil: nothing); requeue
// is true for a move back to queued that keeps the retry budget.
func (s *Service) verdict(t *controlplane.Task, e *nodeEntry, now time.Time) (*controlplane.Transition, bool) {
	c := s.cfg
	if t.State == controlplane.TaskRunning && t.Spec.TimeoutSeconds > 0 && t.StartedAt != nil &&
		now.Sub(*t.StartedAt) > time.Duration(t.Spec.TimeoutSeconds)*time.Second {
		return &controlplane.Transition{To: controlplane.TaskTimedOut,
			Reason: fmt.Sprintf("ran longer than its timeout of %ds (enforced by the server)", t.Spec.TimeoutSeconds)}, false
	}
	if e == nil {
		return &controlplane.Transition{To: controlplane.TaskFailed, Reason: "node " + t.NodeID + " is not enrolled"}, false
	}
	n := e.node
	silent := n.LastHeartbeat == nil || now.Sub(*n.LastHeartbeat) > c.LostGrace
	switch {
	case t.State == controlplane.TaskScheduled && silent:
		return &controlplane.Transition{To: controlplane.TaskQueued, Reason: "node " + t.NodeID + " went silent before starting it"}, true
	case t.State == controlplane.TaskScheduled && now.Sub(t.UpdatedAt) > c.StartTimeout:
		return &controlplane.Transition{To: controlplane.TaskQueued,
			Reason: fmt.Sprintf("node %s did not start it within %s", t.NodeID, c.StartTimeout)}, true
	case t.State == controlplane.TaskRunning && silent:
		return &controlplane.Transition{To: controlplane.TaskFailed,
			Reason: fmt.Sprintf("node %s lost: no heartbeat for %s", t.NodeID, c.LostGrace)}, false
	case t.State == controlplane.TaskRunning && t.StartedAt != nil && now.Sub(*t.StartedAt) > c.LostGrace &&
		n.LastHeartbeat.After(t.StartedAt.Add(c.LostGrace)) && !running(n)[controlplane.AllocationKey{TaskID: t.ID, Attempt: t.Attempt}]:
		return &controlplane.Transition{To: controlplane.TaskFailed, Reason: "the agent on " + t.NodeID + " no longer runs it"}, false
	}
	return nil, false
}
