package smireceiver

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/scraper"
	"go.opentelemetry.io/collector/scraper/scraperhelper"

	"github.com/heteroflow/heteroflow/receivers/internal/smiscraper"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// CollectFunc runs a vendor's CLI invocations through run and parses them.
type CollectFunc = func(ctx context.Context, vendor string, run Runner) (*inventory.Snapshot, error)

// Spec is what differs between the vendor receivers.
type Spec struct {
	Type      component.Type
	Stability component.StabilityLevel
	Vendor    string // inventory.Vendor…
	Tool      string // CLI name on PATH, replaced by tool_path
	ScopeName string // the receiver's import path
	// Collect runs and parses the CLI; nil uses the one Bind set.
	Collect CollectFunc
	// Unavailable reports errors meaning "vendor absent" besides
	// ErrToolNotFound (e.g. driver not loaded); nil: none.
	Unavailable func(error) bool
}

// NewFactory returns the receiver factory for spec. run replaces the exec
// runner (tests feed canned CLI output through it); nil runs the real CLI.
func NewFactory(spec Spec, run Runner) receiver.Factory {
	return receiver.NewFactory(spec.Type,
		func() component.Config { return createDefaultConfig() },
		receiver.WithMetrics(func(_ context.Context, set receiver.Settings, cfg component.Config,
			next consumer.Metrics,
		) (receiver.Metrics, error) {
			return createMetrics(spec, run, set, cfg, next)
		}, spec.Stability))
}

func createMetrics(spec Spec, run Runner, set receiver.Settings, cfg component.Config,
	next consumer.Metrics,
) (receiver.Metrics, error) {
	c, ok := cfg.(*Config)
	if !ok {
		return nil, fmt.Errorf("%s: config is %T, not *smireceiver.Config", spec.Type, cfg)
	}
	if run == nil {
		run = ExecRunner(toolNames(spec.Vendor, spec.Tool), c.ToolPath, c.Env)
	}
	collect := spec.Collect
	if collect == nil {
		collect = boundCollect
	}
	sc := smiscraper.New(smiscraper.Settings{
		Vendor:  spec.Vendor,
		Collect: func(ctx context.Context) (*inventory.Snapshot, error) { return collect(ctx, spec.Vendor, run) },
		Unavailable: func(err error) bool {
			return errors.Is(err, ErrToolNotFound) || isBoundUnavailable(err) ||
				(spec.Unavailable != nil && spec.Unavailable(err))
		},
		Metrics:   c.MetricsBuilderConfig,
		ScopeName: spec.ScopeName,
		Version:   set.BuildInfo.Version,
		Logger:    set.Logger,
	})
	s, err := scraper.NewMetrics(sc.Scrape, scraper.WithStart(sc.Start))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", spec.Type, err)
	}
	return scraperhelper.NewMetricsController(&c.ControllerConfig, set, next,
		scraperhelper.AddMetricsScraper(spec.Type, s))
}
