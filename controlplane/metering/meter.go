package metering

import (
	"context"
	"fmt"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
)

// meterBatch bounds the released intervals one pass reads at a time.
const meterBatch = 1000

// MeterOnce runs one metering pass: released intervals become records and
// are marked metered; the ended days of still-held slices are recorded.
// Safe to run on several servers at once (every write is idempotent), but
// the service runs it on the lease holder only, so that the counters
// count each record once. It returns the records it inserted.
func (s *Service) MeterOnce(ctx context.Context) ([]*controlplane.UsageRecord, error) {
	now := s.now()
	shares, err := s.shareFunc(ctx)
	if err != nil {
		return nil, err
	}
	var inserted []*controlplane.UsageRecord
	for {
		ivs, err := s.store.ListUnmeteredIntervals(ctx, meterBatch)
		if err != nil {
			return inserted, fmt.Errorf("list released intervals: %w", err)
		}
		if len(ivs) == 0 {
			break
		}
		var recs []*controlplane.UsageRecord
		ids := make([]int64, 0, len(ivs))
		for _, iv := range ivs {
			recs = append(recs, Split(iv, shares(iv), now, false)...)
			ids = append(ids, iv.ID)
		}
		in, err := s.store.RecordUsage(ctx, recs, ids)
		if err != nil {
			return inserted, fmt.Errorf("record usage: %w", err)
		}
		inserted = append(inserted, in...)
		if len(ivs) < meterBatch {
			break
		}
	}
	open, err := s.store.ListOpenIntervals(ctx)
	if err != nil {
		return inserted, fmt.Errorf("list open intervals: %w", err)
	}
	var recs []*controlplane.UsageRecord
	for _, iv := range open {
		for _, r := range Split(iv, shares(iv), now, true) {
			if !s.recorded(r) {
				recs = append(recs, r)
			}
		}
	}
	if len(recs) > 0 {
		in, err := s.store.RecordUsage(ctx, recs, nil)
		if err != nil {
			return inserted, fmt.Errorf("record usage of held slices: %w", err)
		}
		s.markRecorded(recs)
		inserted = append(inserted, in...)
	}
	s.metrics.add(inserted)
	return inserted, nil
}

// recorded remembers the ended days of held slices this process wrote, so
// that a pass does not offer them again (the store would ignore them).
func (s *Service) recorded(r *controlplane.UsageRecord) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.done[recKey{r.IntervalID, r.Day.Unix()}]
}

func (s *Service) markRecorded(recs []*controlplane.UsageRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cut := s.now().Add(-40 * day).Unix() // held slices older than this are rare; forget them
	for k := range s.done {
		if k.day < cut {
			delete(s.done, k)
		}
	}
	for _, r := range recs {
		s.done[recKey{r.IntervalID, r.Day.Unix()}] = true
	}
}

type recKey struct {
	id  int64
	day int64
}

// shareFunc returns the share of an interval's slice, with device memory
// totals read from the nodes' inventories once per pass.
func (s *Service) shareFunc(ctx context.Context) (func(*controlplane.AllocationInterval) int, error) {
	mem := map[devKey]int64{}
	page := controlplane.Page{Limit: controlplane.MaxPageLimit}
	for ; ; page.Offset += page.Limit {
		nodes, total, err := s.store.ListNodes(ctx, controlplane.NodeFilter{Page: page})
		if err != nil {
			return nil, fmt.Errorf("list nodes: %w", err)
		}
		for _, n := range nodes {
			for _, snap := range n.Inventory {
				for _, d := range snap.Devices {
					if d.MemoryTotalMiB != nil {
						mem[devKey{n.ID, snap.Vendor, d.Index}] = *d.MemoryTotalMiB
					}
				}
			}
		}
		if len(nodes) == 0 || page.Offset+len(nodes) >= total {
			break
		}
	}
	return func(iv *controlplane.AllocationInterval) int {
		return ShareMilli(iv.ComputeMilli, iv.MemoryMiB, mem[devKey{iv.NodeID, iv.Vendor, iv.DeviceIndex}])
	}, nil
}

type devKey struct {
	node   string
	vendor string
	index  int
}

// LeaseName is the lease of the server that meters.
const LeaseName = "metering"

// Run meters every interval while this server holds the metering lease,
// until ctx ends (then the lease is given up).
func (s *Service) Run(ctx context.Context) {
	// The lease is renewed (or campaigned for) every third of its TTL and
	// a pass runs every Interval while held, at once on taking over.
	t := time.NewTicker(min(s.cfg.Interval, s.cfg.LeaseTTL/3))
	defer t.Stop()
	var metered time.Time
	leader := false
	defer func() {
		rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.store.ReleaseLease(rctx, LeaseName, s.cfg.Holder)
	}()
	var checked time.Time
	for {
		if s.now().Sub(checked) >= budgetEvery {
			// Every server checks budgets: the hard stop is read by
			// whichever server leads the scheduler.
			if err := s.checkBudgets(ctx); err != nil && ctx.Err() == nil {
				s.log.Error("budget check failed", "err", err)
			}
			checked = s.now()
		}
		ok, err := s.store.AcquireLease(ctx, LeaseName, s.cfg.Holder, s.cfg.LeaseTTL)
		switch {
		case err != nil && ctx.Err() == nil:
			s.log.Warn("metering: lease", "err", err)
		case ok:
			if !leader || s.now().Sub(metered) >= s.cfg.Interval {
				metered = s.now()
				if _, err := s.MeterOnce(ctx); err != nil && ctx.Err() == nil {
					s.log.Error("metering pass failed", "err", err)
				}
			}
		}
		leader = ok && err == nil
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
