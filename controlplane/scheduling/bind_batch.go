package scheduling

import (
	"context"
	"errors"

	"github.com/heteroflow/heteroflow/controlplane"
)

// bindBatch bounds the placements one bind transaction carries: a queue
// drained at thousands of placements per second pays one commit per batch
// instead of one per task.
const bindBatch = 256

// bindBatchLocked makes single-task placements durable in one transaction.
// When that loses a race (a task of the batch was cancelled or changed
// meanwhile, and the store refused the whole transaction), each binds on
// its own, so only the changed task is taken back out of the cluster.
func (s *Service) bindBatchLocked(ctx context.Context, batch []*pending) error {
	switch len(batch) {
	case 0:
		return nil
	case 1:
		return s.bindLocked(ctx, batch)
	}
	err := s.commitBindLocked(ctx, batch)
	if err == nil {
		return nil
	}
	if !lostRace(err) {
		for _, pd := range batch {
			_ = s.snap.cl.Release(pd.placement.TaskID)
			s.backoffLocked(pd.task.ID)
		}
		return err
	}
	s.m.bindSplits.Inc()
	for i, pd := range batch {
		if err := s.bindLocked(ctx, []*pending{pd}); err != nil {
			s.releaseUnboundLocked(batch[i+1:])
			return err
		}
	}
	return nil
}

// releaseUnboundLocked takes assumed placements that will not be bound
// (the tick ended early) back out of the cluster.
func (s *Service) releaseUnboundLocked(batch []*pending) {
	for _, pd := range batch {
		_ = s.snap.cl.Release(pd.placement.TaskID)
	}
}

// lostRace: the store refused a bind because a task changed meanwhile.
func lostRace(err error) bool {
	return errors.Is(err, controlplane.ErrConflict) || errors.Is(err, controlplane.ErrNotFound)
}

// admitBatchLocked writes a tick's admissions (submitted → queued)
// bindBatch at a time, one transaction each; a batch refused because a
// task changed meanwhile (cancelled before admission) is written task by
// task, skipping the changed one.
func (s *Service) admitBatchLocked(ctx context.Context, trs []controlplane.Transition) error {
	for len(trs) > 0 {
		n := min(len(trs), bindBatch)
		chunk := trs[:n]
		trs = trs[n:]
		_, err := s.store.TransitionTasks(ctx, chunk)
		switch {
		case err == nil:
			s.m.admissions.WithLabelValues(string(controlplane.TaskQueued)).Add(float64(n))
			continue
		case !lostRace(err):
			return err
		}
		for _, tr := range chunk {
			_, err := s.store.TransitionTask(ctx, tr)
			if err != nil && !errors.Is(err, controlplane.ErrConflict) {
				return err
			}
			if err == nil {
				s.m.admissions.WithLabelValues(string(tr.To)).Inc()
			}
		}
	}
	return nil
}
