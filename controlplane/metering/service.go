package metering

import (
	"errors"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/heteroflow/heteroflow/controlplane"
)

// Store is what metering needs from persistence.
type Store interface {
	controlplane.Store
	controlplane.NodeStore
	controlplane.SchedulingStore
	controlplane.BillingStore
}

// Config tunes the service.
type Config struct {
	// Interval between metering passes (default 15 s).
	Interval time.Duration
	// Holder names this server in the metering lease (default host+pid).
	Holder string
	// LeaseTTL is how long the metering lease outlives its holder (default
	// three intervals); a follower campaigns every third of it, so it takes
	// over at most LeaseTTL after the holder dies.
	LeaseTTL time.Duration
	// MeasureLag is how long after a release the meter waits before it
	// meters the interval, so that the device metrics of its last moments
	// have arrived (default 1 min with a Querier, 0 without).
	MeasureLag time.Duration
}

// Options are the service's dependencies.
type Options struct {
	Store    Store
	Config   Config
	Logger   *slog.Logger
	Registry prometheus.Registerer // nil: no counters are exported
	// Querier reads the device metrics for measured usage; nil: usage is
	// not measured.
	Querier Querier
	// Audit records price book, statement and budget changes; nil: none.
	Audit func(*controlplane.AuditEntry)
	Now   func() time.Time
}

// Service meters usage and answers billing questions.
type Service struct {
	store   Store
	cfg     Config
	log     *slog.Logger
	now     func() time.Time
	audit   func(*controlplane.AuditEntry)
	metrics *meterMetrics
	querier Querier

	mu   sync.Mutex
	done map[recKey]bool
	// inv is the nodes' inventory as read at invAt (metering clock).
	inv   *inventory
	invAt time.Time
	// openAt is the settled time of the last read of the held slices.
	openAt time.Time
	// budgetLevel is the highest alert level raised per budget and month.
	budgetLevel map[string]int
	// budgets is this month's spend per budget, as of the last check.
	budgets map[string]*budgetState
}

// New builds a Service.
func New(o Options) (*Service, error) {
	if o.Store == nil {
		return nil, errors.New("metering: Store is required")
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Config.Interval <= 0 {
		o.Config.Interval = 15 * time.Second
	}
	if o.Config.LeaseTTL <= 0 {
		o.Config.LeaseTTL = 3 * o.Config.Interval
	}
	if o.Config.Holder == "" {
		host, _ := os.Hostname()
		o.Config.Holder = host + "/" + itoa(int64(os.Getpid()))
	}
	if o.Config.MeasureLag == 0 && o.Querier != nil {
		o.Config.MeasureLag = time.Minute
	}
	if o.Audit == nil {
		o.Audit = func(*controlplane.AuditEntry) {}
	}
	m, err := newMeterMetrics(o.Registry)
	if err != nil {
		return nil, err
	}
	return &Service{store: o.Store, cfg: o.Config, log: o.Logger, now: o.Now, audit: o.Audit,
		metrics: m, querier: o.Querier, done: map[recKey]bool{}, budgetLevel: map[string]int{}}, nil
}
