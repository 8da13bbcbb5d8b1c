package scheduling

import (
	"context"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/scheduler/model"
	"github.com/heteroflow/heteroflow/scheduler/plugins"
)

// The live target workload of Fragmentation (FGD's M) is the shape
// popularity of the most recent tasks: a ring of the last workloadWindow
// admitted requests, seeded from the unfinished tasks when a leader starts.
// It is installed at most every workloadRefresh, because a new workload
// drops every per-node cache and memoised score.
const (
	workloadWindow  = 2000
	workloadRefresh = 10 * time.Second
)

// recentShapes is the ring of recent requests.
type recentShapes struct {
	reqs  []model.Request
	next  int
	dirty bool      // changed since last installed
	at    time.Time // when last installed
}

func (r *recentShapes) add(req *model.Request) {
	if len(r.reqs) < workloadWindow {
		r.reqs = append(r.reqs, *req)
	} else {
		r.reqs[r.next] = *req
		r.next = (r.next + 1) % workloadWindow
	}
	r.dirty = true
}

// seedWorkloadLocked fills the ring from the tasks not yet finished, so a
// new leader scores with the workload the cluster is running.
func (s *Service) seedWorkloadLocked(ctx context.Context) error {
	tasks, err := s.store.ListTasksByState(ctx, []controlplane.TaskState{controlplane.TaskQueued,
		controlplane.TaskScheduled, controlplane.TaskRunning}, workloadWindow)
	if err != nil {
		return err
	}
	for _, t := range tasks {
		if r, err := requestOf(t); err == nil {
			s.shapes.add(r)
		}
	}
	return nil
}

// observeWorkloadLocked installs the ring as Fragmentation's workload when
// it changed and the last install is older than workloadRefresh (or force).
func (s *Service) observeWorkloadLocked(force bool) error {
	if s.fw == nil || len(s.shapes.reqs) == 0 {
		return nil
	}
	now := s.now()
	if !force && (!s.shapes.dirty || now.Sub(s.shapes.at) < workloadRefresh) {
		return nil
	}
	p, ok := s.fw.Plugin(plugins.NameFragmentation)
	if !ok {
		return nil
	}
	if err := p.(*plugins.Fragmentation).ObserveWorkload(s.shapes.reqs); err != nil {
		return err
	}
	s.shapes.dirty, s.shapes.at = false, now
	return nil
}
