package scheduling

import (
	"context"
	"sync"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

// fleetShapes is the submit-time never-fits check's view of the cluster:
// one node per distinct device inventory (a fleet of 5,000 identical
// nodes is one entry). The check depends on the inventory only, never on
// allocations, so no ledger is read. Submissions never wait for the read
// once a view exists: a view older than twice NodeSync is served while one
// background read replaces it (reading 5,000 nodes takes longer than a
// submission should). On the leader the scheduler's own node sync, every
// NodeSync, installs the view from the nodes it has just read, so the
// fleet is read and decoded once per NodeSync, not twice.
type fleetShapes struct {
	mu         sync.Mutex // guards the fields below
	at         time.Time
	nodes      []*model.NodeInfo
	refreshing bool
	// fed: the leader's node sync installs the views (fleetFromSyncLocked),
	// so submissions start no read of their own while its views are
	// younger than fedStaleness NodeSyncs (a 5,000-node read under load
	// can take longer than two).
	fed bool
	// started and done number the reads: a caller that needs a read begun
	// after it asked, and finds one done by the time it holds read, takes
	// that one (the first burst of submissions shares one read instead of
	// reading the fleet once each, one after another).
	started, done uint64
	read          sync.Mutex // one store read at a time
}

// fleetNodes returns the view of the fleet: a fresh read when fresh is set
// or none exists yet, else the current one (starting a background read
// when it is older than NodeSync).
func (s *Service) fleetNodes(ctx context.Context, fresh bool) ([]*model.NodeInfo, error) {
	f := &s.fleet
	f.mu.Lock()
	nodes, at := f.nodes, f.at
	// A view of an empty cluster judges nothing (every task is admitted), so
	// it is never served: the nodes that just enrolled are read instead.
	if !fresh && len(nodes) > 0 {
		stale := 2 * s.cfg.NodeSync
		if f.fed {
			stale = fedStaleness * s.cfg.NodeSync
		}
		if now := s.now(); (now.Sub(at) >= stale || now.Before(at)) && !f.refreshing {
			f.refreshing = true
			go func() {
				rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
				defer cancel()
				if _, err := s.readFleet(rctx); err != nil {
					s.log.Warn("scheduling: reading the fleet for the never-fits check", "err", err)
				}
			}()
		}
		f.mu.Unlock()
		return nodes, nil
	}
	f.mu.Unlock()
	return s.readFleet(ctx)
}

// readFleet reads every node and installs the view.
func (s *Service) readFleet(ctx context.Context) ([]*model.NodeInfo, error) {
	f := &s.fleet
	f.mu.Lock()
	want := f.started + 1 // a read that starts from now on
	f.mu.Unlock()
	f.read.Lock()
	defer f.read.Unlock()
	defer func() {
		f.mu.Lock()
		f.refreshing = false
		f.mu.Unlock()
	}()
	f.mu.Lock()
	if f.done >= want && f.nodes != nil {
		nodes := f.nodes
		f.mu.Unlock()
		return nodes, nil
	}
	f.started++
	num := f.started
	f.mu.Unlock()
	began := s.now()
	nodes, err := allNodes(ctx, s.store)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	out := []*model.NodeInfo{}
	for _, n := range nodes {
		mn, shape, err := modelNode(n)
		if err != nil {
			return nil, err
		}
		if seen[shape] {
			continue
		}
		seen[shape] = true
		out = append(out, &model.NodeInfo{Node: &mn})
	}
	s.installFleet(out, began, false)
	f.mu.Lock()
	f.done = max(f.done, num) // only a read that succeeded serves those waiting
	f.mu.Unlock()
	return out, nil
}

// fedStaleness: how many NodeSyncs old a view the leader's sync installed
// may get before a submission reads the fleet itself.
const fedStaleness = 10

// installFleet replaces the view with one read at the given time, unless
// a newer one is installed already.
func (s *Service) installFleet(nodes []*model.NodeInfo, at time.Time, fromSync bool) {
	f := &s.fleet
	f.mu.Lock()
	if !at.Before(f.at) { // never replace a newer view with an older read
		f.nodes, f.at, f.fed = nodes, at, fromSync
	}
	f.mu.Unlock()
}

// fleetFromSyncLocked installs the view from the nodes the leader's sync
// read at the given time, one per distinct shape, reusing the model nodes
// the sync built (their static description; allocations are not part of
// the view).
func (s *Service) fleetFromSyncLocked(nodes []*controlplane.Node, at time.Time) {
	seen := map[string]bool{}
	out := []*model.NodeInfo{}
	for _, n := range nodes {
		e, ok := s.snap.nodes[n.ID]
		if !ok || seen[e.shape] {
			continue
		}
		seen[e.shape] = true
		mn := *s.snap.cl.Nodes[e.index].Node
		out = append(out, &model.NodeInfo{Node: &mn})
	}
	s.installFleet(out, at, true)
}
