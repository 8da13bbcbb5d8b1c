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
	settled := now.Add(-s.cfg.MeasureLag)
	var inserted []*controlplane.UsageRecord
	for {
		ivs, err := s.store.ListUnmeteredIntervals(ctx, meterBatch)
		if err != nil {
			return inserted, fmt.Errorf("list released intervals: %w", err)
		}
		full := len(ivs) == meterBatch
		// Oldest release first: the ones released too recently for their
		// last metrics to have arrived wait for a later pass.
		for i, iv := range ivs {
			if iv.ReleasedAt != nil && iv.ReleasedAt.After(settled) {
				ivs, full = ivs[:i], false
				break
			}
		}
		if len(ivs) == 0 {
			break
		}
		inv, err := s.inventoryFor(ctx, ivs)
		if err != nil {
			return inserted, err
		}
		recs, ids := s.measured(ctx, inv, ivs, now, false)
		in, err := s.store.RecordUsage(ctx, recs, ids)
		if err != nil {
			return inserted, fmt.Errorf("record usage: %w", err)
		}
		inserted = append(inserted, in...)
		if !full {
			break
		}
	}
	if !s.openScanDue(settled) {
		s.metrics.add(inserted)
		return inserted, nil
	}
	open, err := s.store.ListOpenIntervals(ctx)
	if err != nil {
		return inserted, fmt.Errorf("list open intervals: %w", err)
	}
	inv, err := s.inventoryFor(ctx, open)
	if err != nil {
		return inserted, err
	}
	// Ended days of held slices (measured once the day has settled).
	var recs []*controlplane.UsageRecord
	var idx []int
	for _, iv := range open {
		for _, r := range Split(iv, inv.share(iv), settled, true) {
			if !s.recorded(r) {
				recs, idx = append(recs, r), append(idx, iv.DeviceIndex)
			}
		}
	}
	if len(recs) > 0 {
		s.measure(ctx, inv, recs, idx, settled)
		in, err := s.store.RecordUsage(ctx, recs, nil)
		if err != nil {
			return inserted, fmt.Errorf("record usage of held slices: %w", err)
		}
		s.markRecorded(recs)
		inserted = append(inserted, in...)
	}
	s.openScanned(settled)
	s.metrics.add(inserted)
	return inserted, nil
}

// measured splits intervals into records and measures them. It returns
// the records and the intervals' ids.
func (s *Service) measured(ctx context.Context, inv *inventory, ivs []*controlplane.AllocationInterval, now time.Time,
	completeOnly bool,
) ([]*controlplane.UsageRecord, []int64) {
	var recs []*controlplane.UsageRecord
	idx := make([]int, 0, len(ivs))
	ids := make([]int64, 0, len(ivs))
	for _, iv := range ivs {
		for _, r := range Split(iv, inv.share(iv), now, completeOnly) {
			recs = append(recs, r)
			idx = append(idx, iv.DeviceIndex)
		}
		ids = append(ids, iv.ID)
	}
	s.measure(ctx, inv, recs, idx, now)
	return recs, ids
}

// measure fills the measured usage of recs (idx: each one's device index)
// when a Querier is set. What cannot be measured stays unmeasured: a
// record is never held back for its metrics.
func (s *Service) measure(ctx context.Context, inv *inventory, recs []*controlplane.UsageRecord, idx []int, now time.Time) {
	m, err := s.newMeasurer(ctx, inv.hosts, recs)
	if err != nil {
		s.log.Warn("metering: usage not measured", "err", err)
		return
	}
	if m == nil {
		return
	}
	failed := 0
	for i, r := range recs {
		if err := m.measure(ctx, r, idx[i], now); err != nil {
			if failed == 0 {
				s.log.Warn("metering: part of the usage not measured", "err", err)
			}
			failed++
		}
	}
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

// inventory is what the nodes' inventories tell the meter: device memory
// totals (for slices' shares) and the host name of each node's metrics.
type inventory struct {
	mem   map[devKey]int64
	hosts map[string]string
}

func (inv *inventory) share(iv *controlplane.AllocationInterval) int {
	return ShareMilli(iv.ComputeMilli, iv.MemoryMiB, inv.mem[devKey{iv.NodeID, iv.Vendor, iv.DeviceIndex}])
}

// inventoryTTL is how long the meter reuses the nodes' inventory. Device
// memory totals change only when a node's hardware does, and decoding
// every node's inventory on each pass was most of a pass's cost.
const inventoryTTL = time.Minute

// inventoryFor is the nodes' inventory, read again when older than
// inventoryTTL or when one of ivs is on a node it does not know.
func (s *Service) inventoryFor(ctx context.Context, ivs []*controlplane.AllocationInterval) (*inventory, error) {
	s.mu.Lock()
	inv, at := s.inv, s.invAt
	s.mu.Unlock()
	fresh := inv != nil && s.now().Sub(at) < inventoryTTL && !at.After(s.now())
	for _, iv := range ivs {
		if !fresh {
			break
		}
		_, fresh = inv.hosts[iv.NodeID]
	}
	if fresh {
		return inv, nil
	}
	read := s.now()
	inv, err := s.inventory(ctx)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.inv, s.invAt = inv, read
	s.mu.Unlock()
	return inv, nil
}

// openRescan bounds how long the meter goes without reading the held
// slices within one day (a safety net: a slice is always metered whole at
// its release).
const openRescan = time.Hour

// openScanDue says whether this pass reads the held slices: a held slice
// gains a record only when a day ends, so once the slices held at the
// start of the settled day have been read, further passes that day have
// nothing to add (a slice bound later cannot have an ended day yet).
func (s *Service) openScanDue(settled time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.openAt.IsZero() || !sameDay(s.openAt, settled) || settled.Sub(s.openAt) >= openRescan || settled.Before(s.openAt)
}

func (s *Service) openScanned(settled time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.openAt = settled
}

func sameDay(a, b time.Time) bool {
	return a.UTC().Truncate(day).Equal(b.UTC().Truncate(day))
}

// inventory reads every node's inventory.
func (s *Service) inventory(ctx context.Context) (*inventory, error) {
	inv := &inventory{mem: map[devKey]int64{}, hosts: map[string]string{}}
	page := controlplane.Page{Limit: controlplane.MaxPageLimit}
	for ; ; page.Offset += page.Limit {
		nodes, total, err := s.store.ListNodes(ctx, controlplane.NodeFilter{Page: page})
		if err != nil {
			return nil, fmt.Errorf("list nodes: %w", err)
		}
		for _, n := range nodes {
			inv.hosts[n.ID] = n.Hostname
			for _, snap := range n.Inventory {
				for _, d := range snap.Devices {
					if d.MemoryTotalMiB != nil {
						inv.mem[devKey{n.ID, snap.Vendor, d.Index}] = *d.MemoryTotalMiB
					}
				}
			}
		}
		if len(nodes) == 0 || page.Offset+len(nodes) >= total {
			break
		}
	}
	return inv, nil
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
