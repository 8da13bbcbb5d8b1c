package storeutil

import (
	"fmt"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
)

// PriceDates returns the stored forms of a price entry's dates: the open
// end is controlplane.OpenEnd so that range comparisons need no NULL case.
func PriceDates(p *controlplane.PriceEntry) (from, to string) {
	from, to = p.From.UTC().Format(controlplane.DateLayout), controlplane.OpenEnd
	if p.To != nil {
		to = p.To.UTC().Format(controlplane.DateLayout)
	}
	return from, to
}

// ParsePriceDates sets p's dates from their stored forms.
func ParsePriceDates(p *controlplane.PriceEntry, from, to string) error {
	f, err := time.Parse(controlplane.DateLayout, from)
	if err != nil {
		return fmt.Errorf("price %d: bad valid_from %q: %w", p.ID, from, err)
	}
	p.From, p.To = f, nil
	if to != controlplane.OpenEnd {
		t, err := time.Parse(controlplane.DateLayout, to)
		if err != nil {
			return fmt.Errorf("price %d: bad valid_to %q: %w", p.ID, to, err)
		}
		p.To = &t
	}
	return nil
}

// OverlapError is the ErrInvalid of a price entry that overlaps entry other.
func OverlapError(p *controlplane.PriceEntry, other int64) error {
	return controlplane.Invalidf("the price entry overlaps entry %d for vendor %q, model %q, qos %q: "+
		"end the earlier entry (effective_to) before the new one starts", other, p.Vendor, p.Model, p.QoS)
}
