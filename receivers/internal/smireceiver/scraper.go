package smireceiver

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/scraper/scrapererror"
	"go.uber.org/zap"

	"github.com/heteroflow/heteroflow/receivers/internal/hwmetrics"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// CollectFunc runs the vendor CLI(s) and parses what they print.
type CollectFunc func(ctx context.Context) (*inventory.Snapshot, error)

// DefaultLogEvery is how often a persisting "vendor unavailable" error is
// logged again: often enough to be seen, rare enough not to flood a node
// that simply lacks the vendor.
const DefaultLogEvery = 10 * time.Minute

// scraperSettings configure a Scraper.
type scraperSettings struct {
	Vendor  string
	Collect CollectFunc
	// Unavailable reports whether a Collect error means the vendor is absent
	// on this node (tool missing, driver not loaded) rather than broken.
	Unavailable func(error) bool
	Metrics     hwmetrics.MetricsBuilderConfig
	ScopeName   string
	Version     string
	Logger      *zap.Logger
	LogEvery    time.Duration    // 0: DefaultLogEvery
	Now         func() time.Time // nil: time.Now
}

// Scraper is one vendor's scraper. Scrape calls are serialised by the
// scraper controller; the mutex guards against a caller that does not.
type Scraper struct {
	set scraperSettings
	mu  sync.Mutex
	mb  *hwmetrics.MetricsBuilder
	// lastUnavailableLog is zero while the vendor is available.
	lastUnavailableLog time.Time
}

// New returns a Scraper; it is ready after Start.
func newScraper(set scraperSettings) *Scraper {
	if set.LogEvery <= 0 {
		set.LogEvery = DefaultLogEvery
	}
	if set.Now == nil {
		set.Now = time.Now
	}
	if set.Logger == nil {
		set.Logger = zap.NewNop()
	}
	if set.Unavailable == nil {
		set.Unavailable = func(error) bool { return false }
	}
	return &Scraper{set: set}
}

// Start fixes the start time of the cumulative sums.
func (s *Scraper) Start(context.Context, component.Host) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mb = hwmetrics.NewMetricsBuilder(s.set.Metrics, s.set.ScopeName, s.set.Version, s.set.Now())
	return nil
}

// Scrape collects one snapshot and returns its metrics.
func (s *Scraper) Scrape(ctx context.Context) (pmetric.Metrics, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mb == nil {
		return pmetric.NewMetrics(), errors.New("smireceiver: Scrape before Start")
	}
	snap, err := s.set.Collect(ctx)
	if err != nil && s.set.Unavailable(err) {
		s.logUnavailable(err)
		return pmetric.NewMetrics(), nil
	}
	if err != nil && snap == nil {
		return pmetric.NewMetrics(), fmt.Errorf("%s: %w", s.set.Vendor, err)
	}
	if !s.lastUnavailableLog.IsZero() {
		s.set.Logger.Info("vendor CLI available again / 厂商工具已恢复", zap.String("vendor", s.set.Vendor))
		s.lastUnavailableLog = time.Time{}
	}

	record(s.mb, snap, s.set.Vendor, s.set.Now())
	md := s.mb.Emit()

	// Each warning is one device or field the parser had to skip.
	var problems []error
	for _, w := range snap.Warnings {
		problems = append(problems, errors.New(w))
	}
	if err != nil { // a snapshot and an error: the CLI half answered
		problems = append(problems, err)
	}
	if len(problems) > 0 {
		return md, scrapererror.NewPartialScrapeError(
			fmt.Errorf("%s: %w", s.set.Vendor, errors.Join(problems...)), len(problems))
	}
	return md, nil
}

// logUnavailable logs err once, then again at most every LogEvery.
func (s *Scraper) logUnavailable(err error) {
	now := s.set.Now()
	if !s.lastUnavailableLog.IsZero() && now.Sub(s.lastUnavailableLog) < s.set.LogEvery {
		return
	}
	s.lastUnavailableLog = now
	s.set.Logger.Error("vendor CLI unavailable, no metrics for this vendor / 厂商工具不可用，该厂商无指标",
		zap.String("vendor", s.set.Vendor), zap.Error(err),
		zap.Duration("next_report_in", s.set.LogEvery))
}
