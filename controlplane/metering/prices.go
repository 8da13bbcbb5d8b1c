package metering

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
)

// PriceBook finds the entry that prices a record: among the entries whose
// dates cover the record's day and whose vendor, model and QoS match ("" =
// any), the most specific (vendor over model over QoS). Entries with the
// same vendor, model and QoS never overlap (the store refuses it), so the
// answer is unique.
type PriceBook struct {
	entries []*controlplane.PriceEntry
}

// NewPriceBook wraps entries.
func NewPriceBook(entries []*controlplane.PriceEntry) *PriceBook { return &PriceBook{entries: entries} }

// Find returns the price of usage of vendor/model/qos on day, nil if none.
func (b *PriceBook) Find(vendor, model string, qos controlplane.QoS, day time.Time) *controlplane.PriceEntry {
	var best *controlplane.PriceEntry
	bestScore := -1
	for _, e := range b.entries {
		if (e.Vendor != "" && e.Vendor != vendor) || (e.Model != "" && e.Model != model) || (e.QoS != "" && e.QoS != qos) {
			continue
		}
		if day.Before(e.From) || (e.To != nil && !day.Before(*e.To)) {
			continue
		}
		score := 0
		if e.Vendor != "" {
			score += 4
		}
		if e.Model != "" {
			score += 2
		}
		if e.QoS != "" {
			score++
		}
		if score > bestScore {
			best, bestScore = e, score
		}
	}
	return best
}

// Cost is what usage u of QoS qos costs at price p (0 without a price).
func Cost(u UsageTotals, qos controlplane.QoS, p *controlplane.PriceEntry) float64 {
	if p == nil {
		return 0
	}
	h := u.Hours()
	c := h.DeviceHours*p.DeviceHour + h.MemoryGiBHours*p.MemoryGiBHour + h.ComputePercentHours*p.ComputePercentHour
	if qos == controlplane.QoSBronze {
		c *= 1 - p.BronzeDiscountPercent/100
	}
	return c
}

// round2 rounds an amount to cents (fen).
func round2(v float64) float64 { return math.Round(v*100) / 100 }

// today is 00:00 UTC of the service clock's day.
func (s *Service) today() time.Time { return controlplane.Day(s.now()) }

// CreatePrice adds an entry. Past reports never change, so an entry takes
// effect today at the earliest; the book has one currency.
func (s *Service) CreatePrice(ctx context.Context, p *controlplane.PriceEntry, actor string) error {
	p.ID = 0
	if err := p.Validate(); err != nil {
		return err
	}
	if p.From.Before(s.today()) {
		return controlplane.Invalidf("effective_from %s is in the past: a price applies from today (%s) at the earliest, so that past reports never change",
			p.From.Format(controlplane.DateLayout), s.today().Format(controlplane.DateLayout))
	}
	if err := s.sameCurrency(ctx, p); err != nil {
		return err
	}
	p.CreatedBy = actor
	if err := s.store.CreatePrice(ctx, p); err != nil {
		return err
	}
	return nil
}

// UpdatePrice changes an entry. An entry that has taken effect keeps its
// prices and start; only its end may move, and not into the past.
func (s *Service) UpdatePrice(ctx context.Context, p *controlplane.PriceEntry) error {
	old, err := s.store.GetPrice(ctx, p.ID)
	if err != nil {
		return err
	}
	if err := p.Validate(); err != nil {
		return err
	}
	today := s.today()
	if old.From.Before(today) {
		same := old.Vendor == p.Vendor && old.Model == p.Model && old.QoS == p.QoS && old.From.Equal(p.From) &&
			old.Currency == p.Currency && old.DeviceHour == p.DeviceHour && old.MemoryGiBHour == p.MemoryGiBHour &&
			old.ComputePercentHour == p.ComputePercentHour && old.BronzeDiscountPercent == p.BronzeDiscountPercent
		if !same {
			return controlplane.Invalidf("price %d took effect on %s: only its effective_to may change (add a new entry for new prices)",
				p.ID, old.From.Format(controlplane.DateLayout))
		}
		if (old.To != nil && old.To.Before(today)) || (p.To != nil && p.To.Before(today)) {
			return controlplane.Invalidf("effective_to may not move into the past (before %s)", today.Format(controlplane.DateLayout))
		}
	} else if p.From.Before(today) {
		return controlplane.Invalidf("effective_from %s is in the past", p.From.Format(controlplane.DateLayout))
	}
	if err := s.sameCurrency(ctx, p); err != nil {
		return err
	}
	p.CreatedBy, p.CreatedAt = old.CreatedBy, old.CreatedAt
	if err := s.store.UpdatePrice(ctx, p); err != nil {
		return err
	}
	return nil
}

// DeletePrice removes an entry that has not taken effect yet.
func (s *Service) DeletePrice(ctx context.Context, id int64) error {
	old, err := s.store.GetPrice(ctx, id)
	if err != nil {
		return err
	}
	if old.From.Before(s.today()) {
		return controlplane.Invalidf("price %d took effect on %s and prices past usage: end it with effective_to instead",
			id, old.From.Format(controlplane.DateLayout))
	}
	if err := s.store.DeletePrice(ctx, id); err != nil {
		return err
	}
	return nil
}

// ListPrices returns the price book.
func (s *Service) ListPrices(ctx context.Context) ([]*controlplane.PriceEntry, error) {
	return s.store.ListPrices(ctx)
}

func (s *Service) sameCurrency(ctx context.Context, p *controlplane.PriceEntry) error {
	all, err := s.store.ListPrices(ctx)
	if err != nil {
		return err
	}
	for _, e := range all {
		if e.ID != p.ID && e.Currency != p.Currency {
			return controlplane.Invalidf("the price book is in %s: entry %d; %s cannot be mixed in", e.Currency, e.ID, p.Currency)
		}
	}
	return nil
}

// PriceDetail describes an entry for the audit log.
func PriceDetail(p *controlplane.PriceEntry) string {
	to := "open"
	if p.To != nil {
		to = p.To.Format(controlplane.DateLayout)
	}
	return fmt.Sprintf("vendor=%q model=%q qos=%q from=%s to=%s %s device_hour=%g gib_hour=%g compute_pct_hour=%g bronze_discount=%g%%",
		p.Vendor, p.Model, p.QoS, p.From.Format(controlplane.DateLayout), to, p.Currency, p.DeviceHour, p.MemoryGiBHour,
		p.ComputePercentHour, p.BronzeDiscountPercent)
}

// ModuleBilling is the audit module of billing events.
const ModuleBilling controlplane.AuditModule = "billing"

// record writes one audit entry of the billing module (system events; API
// changes are audited by the HTTP layer).
func (s *Service) record(actor, action, target, detail string) {
	s.audit(&controlplane.AuditEntry{At: s.now(), Actor: actor, Module: ModuleBilling, Level: controlplane.LevelInfo,
		Action: action, Target: target, Result: "ok", Detail: detail})
}
