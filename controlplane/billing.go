package controlplane

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"time"
)

// AllocationInterval is one allocation of the ledger from bind to release:
// one task attempt on one device slice. Released ledger rows are kept as
// intervals (allocation_history) in the transaction that removes them, so
// usage metering reads exactly what the ledger held. ReleasedAt is nil
// while the slice is still held. ID is the ledger row's ID, never reused.
type AllocationInterval struct {
	Allocation
	OwnerID    int64
	Owner      string
	ReleasedAt *time.Time
}

// UsageRecord is the metered usage of one interval within one UTC day. The
// key (IntervalID, Day) is unique: writing a record twice is a no-op, so a
// meter that restarts or a new leader never charges an interval twice.
type UsageRecord struct {
	IntervalID int64
	Day        time.Time // 00:00 UTC of the day
	Start, End time.Time // the part of the interval within the day, ms grain
	DurationMS int64     // End - Start in milliseconds
	TaskID     int64
	Attempt    int
	NodeID     string
	DevicePos  int
	DeviceUUID string
	Vendor     string
	Model      string
	QoS        QoS
	Tenant     string
	Project    string
	OwnerID    int64
	Owner      string
	MemoryMiB  int64
	// ComputeMilli is the slice's compute (1000 = one whole device).
	ComputeMilli int
	// ShareMilli is the slice's share of its device: the larger of its
	// memory share and its compute share (1000 = the whole device).
	ShareMilli int
	// Measured is what the slice actually used (usage_measured.go).
	Measured UsageMeasured
}

// UsageFilter selects usage records: days in [From, To), optional scope.
type UsageFilter struct {
	From, To time.Time
	Tenant   string
	Project  string
	OwnerID  int64
	TaskID   int64
	// IntervalIDs limits ListUsage to these intervals (nil: all).
	IntervalIDs []int64
}

// PriceEntry is one line of the price book: prices per hour for usage that
// matches Vendor, Model and QoS ("" matches any) on days in [From, To).
// To nil means open-ended. Amounts are in Currency.
type PriceEntry struct {
	ID     int64
	Vendor string
	Model  string
	QoS    QoS
	From   time.Time  // a UTC date
	To     *time.Time // a UTC date, exclusive; nil = no end
	// Currency is an ISO 4217 code, CNY by default.
	Currency string
	// DeviceHour is charged per device-hour weighted by the slice's share.
	DeviceHour float64
	// MemoryGiBHour per GiB-hour of device memory held.
	MemoryGiBHour float64
	// ComputePercentHour per compute-%-hour (one whole device for an hour = 100).
	ComputePercentHour float64
	// BronzeDiscountPercent is taken off Bronze (preemptible) usage, 0–100.
	BronzeDiscountPercent float64
	CreatedBy             string
	CreatedAt             time.Time
	UpdatedAt             time.Time
}

// Statement is a tenant's closed monthly statement: the report as it was
// when the month was closed. It never changes afterwards.
type Statement struct {
	ID       int64
	Tenant   string
	Month    string // YYYY-MM
	Currency string
	Total    float64
	Report   json.RawMessage
	ClosedBy string
	ClosedAt time.Time
}

// Budget bounds what a tenant (Project "") or one of its projects may spend
// per calendar month. HardStop refuses ("refuse") or holds ("queue") new
// tasks once the month's cost reaches Amount; "" only alerts.
type Budget struct {
	ID        int64
	Tenant    string
	Project   string
	Amount    float64
	Currency  string
	HardStop  string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// BillingStore is the persistence of usage metering and billing,
// implemented by controlplane/sqlite and controlplane/postgres (both pass
// storetest.RunBilling). Errors follow Store's contract; a price entry that
// overlaps another with the same vendor, model and QoS is ErrInvalid.
type BillingStore interface {
	// ListUnmeteredIntervals returns released intervals not yet metered,
	// oldest release first, at most limit.
	ListUnmeteredIntervals(ctx context.Context, limit int) ([]*AllocationInterval, error)
	// ListOpenIntervals returns the ledger's current rows as open intervals.
	ListOpenIntervals(ctx context.Context) ([]*AllocationInterval, error)
	// RecordUsage stores recs (a record whose key exists is left as it
	// is) and marks the intervals metered, in one transaction. It returns
	// the records it inserted.
	RecordUsage(ctx context.Context, recs []*UsageRecord, metered []int64) ([]*UsageRecord, error)
	// ListUsage returns the records of f, by day then interval.
	ListUsage(ctx context.Context, f UsageFilter) ([]*UsageRecord, error)
	// TenantKnown reports whether tenant exists (the tenants table) or any
	// user, task, quota, budget or usage names it.
	TenantKnown(ctx context.Context, tenant string) (bool, error)
	// Sums of usage for reports and the device history for measured usage.
	UsageSumStore

	// Price book.
	CreatePrice(ctx context.Context, p *PriceEntry) error
	GetPrice(ctx context.Context, id int64) (*PriceEntry, error)
	ListPrices(ctx context.Context) ([]*PriceEntry, error)
	UpdatePrice(ctx context.Context, p *PriceEntry) error
	DeletePrice(ctx context.Context, id int64) error

	// Statements: CreateStatement is ErrConflict when the month is closed.
	CreateStatement(ctx context.Context, s *Statement) error
	GetStatement(ctx context.Context, tenant, month string) (*Statement, error)
	ListStatements(ctx context.Context, tenant string) ([]*Statement, error)

	// Budgets: one per (tenant, project); ErrConflict on a second.
	PutBudget(ctx context.Context, b *Budget) error
	ListBudgets(ctx context.Context) ([]*Budget, error)
	DeleteBudget(ctx context.Context, id int64) error
}

// DateLayout is how billing days and price dates are written.
const DateLayout = "2006-01-02"

// OpenEnd stands for "no end" in stored price dates.
const OpenEnd = "9999-12-31"

// Validate checks a price entry before it is stored and fills defaults
// (currency CNY). Overlaps are checked by the store.
func (p *PriceEntry) Validate() error {
	if p.Currency == "" {
		p.Currency = "CNY"
	}
	switch {
	case len(p.Vendor) > 64 || len(p.Model) > 128:
		return Invalidf("vendor is at most 64 characters, model 128")
	case p.QoS != "" && !p.QoS.Valid():
		return Invalidf("qos must be gold, silver, bronze or empty (any), not %q", p.QoS)
	case len(p.Currency) != 3 || strings.ToUpper(p.Currency) != p.Currency:
		return Invalidf("currency must be a three-letter ISO 4217 code such as CNY, not %q", p.Currency)
	case p.DeviceHour < 0 || p.MemoryGiBHour < 0 || p.ComputePercentHour < 0:
		return Invalidf("prices must not be negative")
	case math.IsNaN(p.DeviceHour) || math.IsNaN(p.MemoryGiBHour) || math.IsNaN(p.ComputePercentHour) ||
		math.IsInf(p.DeviceHour, 0) || math.IsInf(p.MemoryGiBHour, 0) || math.IsInf(p.ComputePercentHour, 0):
		return Invalidf("prices must be finite numbers")
	case !(p.BronzeDiscountPercent >= 0 && p.BronzeDiscountPercent <= 100):
		return Invalidf("bronze discount must be between 0 and 100 percent")
	case p.From.IsZero():
		return Invalidf("effective_from is required")
	case p.From != Day(p.From):
		return Invalidf("effective_from must be a date (00:00 UTC)")
	case p.To != nil && (*p.To != Day(*p.To) || !p.To.After(p.From)):
		return Invalidf("effective_to must be a date after effective_from")
	}
	return validVendor(p.Vendor)
}

// Day is 00:00 UTC of t's UTC day.
func Day(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

// Validate checks a budget before it is stored.
func (b *Budget) Validate() error {
	if b.Currency == "" {
		b.Currency = "CNY"
	}
	switch {
	case b.Tenant == "":
		return Invalidf("tenant is required")
	case len(b.Tenant) > 128 || len(b.Project) > 128:
		return Invalidf("tenant and project are at most 128 characters")
	case !(b.Amount > 0) || math.IsInf(b.Amount, 0):
		return Invalidf("budget amount must be a positive number")
	case len(b.Currency) != 3 || strings.ToUpper(b.Currency) != b.Currency:
		return Invalidf("currency must be a three-letter ISO 4217 code such as CNY, not %q", b.Currency)
	case b.HardStop != "" && b.HardStop != string(QuotaQueue) && b.HardStop != string(QuotaRefuse):
		return Invalidf("hard_stop must be empty (alert only), queue or refuse, not %q", b.HardStop)
	}
	return nil
}
