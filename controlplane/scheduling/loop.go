package scheduling

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
)

// maxQueueScan bounds the tasks one tick considers per state.
const maxQueueScan = 1000

// Tick runs one pass of the loop (see doc.go for the order). full also
// re-reads nodes and quotas. Exported for tests, which drive ticks by hand.
func (s *Service) Tick(ctx context.Context, full bool) error {
	var read *nodeRead
	if full {
		at := s.now()
		nodes, err := allNodes(ctx, s.store)
		if err != nil {
			return err
		}
		read = &nodeRead{nodes: nodes, at: at}
	}
	return s.tick(ctx, read)
}

// nodeRead is one read of every stored node.
type nodeRead struct {
	nodes []*controlplane.Node
	at    time.Time
}

// tick is one pass; a non-nil read is applied first, with the re-read of
// quotas, pools and plugin settings. The node read itself happens outside
// the service lock: at 5,000 nodes it takes longer than several ticks'
// placements, and the running loop reads in the background
// (backgroundNodeRead) so placements never wait for it.
func (s *Service) tick(ctx context.Context, read *nodeRead) (err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.snap == nil {
		if err := s.rebuildLocked(ctx); err != nil {
			return err
		}
		s.leader = true
	}
	now := s.now()
	s.lastTick = now
	if read != nil {
		if err := s.syncLocked(ctx, read); err != nil {
			return err
		}
	}
	freed, err := s.releaseLocked(ctx)
	if err != nil {
		return fmt.Errorf("release: %w", err)
	}
	if err := s.reconcileLocked(ctx); err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	if err := s.retryLocked(ctx); err != nil {
		return fmt.Errorf("retries: %w", err)
	}
	if freed {
		// Capacity came back: waiting tasks may fit now (kube moves
		// unschedulable pods back on such events instead of waiting out
		// their backoff).
		clear(s.backoff)
	}
	// Admissions held for placement are written when the tick ends,
	// whatever ends it.
	defer func() {
		if ferr := s.flushAdmissionsLocked(ctx); ferr != nil {
			err = errors.Join(err, fmt.Errorf("admission: %w", ferr))
		}
	}()
	if err := s.admitLocked(ctx); err != nil {
		return fmt.Errorf("admission: %w", err)
	}
	if err := s.observeWorkloadLocked(false); err != nil {
		return fmt.Errorf("workload: %w", err)
	}
	if err := s.placeLocked(ctx); err != nil {
		return fmt.Errorf("placement: %w", err)
	}
	if err := s.autoDefragLocked(ctx); err != nil {
		return fmt.Errorf("defragmentation: %w", err)
	}
	s.m.observe(s)
	return nil
}

// syncLocked applies a read of the nodes and re-reads quotas and plugin
// settings.
func (s *Service) syncLocked(ctx context.Context, read *nodeRead) error {
	nodes := read.nodes
	rebuild, err := s.snap.syncNodes(nodes)
	if err != nil {
		s.log.Warn("scheduling: node inventory not usable", "err", err)
	} else if !rebuild {
		s.fleetFromSyncLocked(nodes, read.at) // the never-fits check's view, without a read of its own
	}
	if s.snap.grew {
		// A node joined or became ready: tasks backing off after finding
		// no room are tried again now, not after their backoff (as for
		// freed capacity below).
		s.snap.grew = false
		clear(s.backoff)
	}
	if rebuild {
		s.log.Info("scheduling: a node's devices changed, rebuilding the cluster")
		if err := s.dropWaitingLocked(ctx, "cluster rebuilt"); err != nil {
			return err
		}
		if err := s.rebuildLocked(ctx); err != nil {
			return err
		}
	}
	if s.quotas, err = s.store.ListQuotas(ctx); err != nil {
		return err
	}
	if err := s.syncPoolsLocked(ctx); err != nil {
		return err
	}
	stored, err := s.store.ListPluginSettings(ctx)
	if err != nil {
		return err
	}
	if !sameSettings(stored, s.settings) {
		if err := s.applySettingsLocked(stored); err != nil {
			s.log.Warn("scheduling: stored plugin settings not applied", "err", err)
		}
	}
	return nil
}

func sameSettings(a, b []controlplane.PluginSetting) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// admitLocked moves submitted tasks to queued after the quota check (a
// single task's admission is held for this tick's placement: admit_bind.go).
func (s *Service) admitLocked(ctx context.Context) error {
	tasks, err := s.store.ListTasksByState(ctx, []controlplane.TaskState{controlplane.TaskSubmitted}, maxQueueScan)
	if err != nil {
		return err
	}
	var admit []controlplane.Transition
	for _, t := range tasks {
		to, reason, final := controlplane.TaskQueued, "admitted", false
		if s.gate != nil {
			switch policy, why := s.gate(&t.Spec); policy {
			case controlplane.QuotaQueue:
				continue // stays submitted until the gate opens
			case controlplane.QuotaRefuse:
				if err := s.markFinal(ctx, t.ID, "refused: "+why); err != nil {
					return err
				}
				if _, err := s.store.TransitionTask(ctx, controlplane.Transition{TaskID: t.ID, From: controlplane.TaskSubmitted,
					To: controlplane.TaskFailed, Reason: "refused: " + why, Actor: "scheduler"}); err != nil && !errors.Is(err, controlplane.ErrConflict) {
					return err
				}
				s.m.admissions.WithLabelValues(string(controlplane.TaskFailed)).Inc()
				continue
			}
		}
		r, err := requestOf(t)
		if err != nil {
			to, reason, final = controlplane.TaskFailed, "not schedulable: "+err.Error(), true
		} else {
			s.shapes.add(r) // demand for Fragmentation, whether its quota admits it now or not
			if q, why, ever := s.quotaCheckLocked(&t.Spec, ""); q != nil {
				switch {
				case ever:
					to, reason, final = controlplane.TaskFailed, "refused: "+why+" (the task alone exceeds it)", true
				case q.Policy == controlplane.QuotaRefuse:
					to, reason, final = controlplane.TaskFailed, "refused: "+why, true
				default:
					reason = "admitted, waiting for quota: " + why
				}
			}
		}
		tr := controlplane.Transition{TaskID: t.ID, From: controlplane.TaskSubmitted, To: to, Reason: reason, Actor: "scheduler"}
		switch {
		case !final && t.Spec.Gang == "":
			s.holdAdmissionLocked(t, tr) // written with its placement, or when the tick ends
			continue
		case !final:
			admit = append(admit, tr) // written together below
			continue
		}
		if err := s.markFinal(ctx, t.ID, reason); err != nil {
			return err
		}
		_, err = s.store.TransitionTask(ctx, tr)
		if err != nil && !errors.Is(err, controlplane.ErrConflict) {
			return err
		}
		s.m.admissions.WithLabelValues(string(to)).Inc()
	}
	return s.admitBatchLocked(ctx, admit)
}

// markFinal records that the task's coming end must not be retried.
func (s *Service) markFinal(ctx context.Context, taskID int64, why string) error {
	ts, err := s.store.GetTaskSchedule(ctx, taskID)
	if errors.Is(err, controlplane.ErrNotFound) {
		ts, err = &controlplane.TaskSchedule{TaskID: taskID}, nil
	}
	if err != nil {
		return err
	}
	ts.Final = true
	doc, _ := whyDoc{TaskID: taskID, Summary: why, At: s.now()}.marshal()
	ts.Why = doc
	return s.store.PutTaskSchedule(ctx, ts)
}

// retryLocked requeues failed/timed-out tasks with retries left once their
// backoff (from the end of the attempt) has passed.
func (s *Service) retryLocked(ctx context.Context) error {
	tasks, err := s.store.ListRetryable(ctx, maxQueueScan)
	if err != nil {
		return err
	}
	now := s.now()
	for _, t := range tasks {
		if t.FinishedAt != nil && now.Before(t.FinishedAt.Add(s.cfg.backoff(t.Attempt+1))) {
			continue
		}
		reason := fmt.Sprintf("retry %d/%d after %s: %s", t.Attempt+1, t.Spec.MaxRetries, t.State, t.Reason)
		_, err := s.store.TransitionTask(ctx, controlplane.Transition{TaskID: t.ID, From: t.State,
			To: controlplane.TaskQueued, Reason: reason, Actor: "scheduler", Retry: true})
		if err != nil && !errors.Is(err, controlplane.ErrConflict) {
			return err
		}
		if err == nil {
			s.m.retries.Inc()
		}
	}
	return nil
}

// backgroundNodeRead reads every node off the loop: start begins a read
// unless one is in flight, take hands over the latest finished one.
type backgroundNodeRead struct {
	mu   sync.Mutex
	busy bool
	done *nodeRead
}

func (b *backgroundNodeRead) start(ctx context.Context, s *Service) {
	b.mu.Lock()
	if b.busy {
		b.mu.Unlock()
		return
	}
	b.busy = true
	b.mu.Unlock()
	go func() {
		at := s.now()
		nodes, err := allNodes(ctx, s.store)
		b.mu.Lock()
		defer b.mu.Unlock()
		b.busy = false
		switch {
		case err == nil:
			b.done = &nodeRead{nodes: nodes, at: at}
		case ctx.Err() == nil:
			s.log.Warn("scheduling: reading nodes", "err", err)
		}
	}()
}

func (b *backgroundNodeRead) take() *nodeRead {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.done
	b.done = nil
	return r
}
