package smireceiver

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/scraper"
	"go.opentelemetry.io/collector/scraper/scraperhelper"

	"github.com/heteroflow/heteroflow/receivers/internal/smicore"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// Runner runs one CLI invocation (smicore.Runner); tests feed canned output.
type Runner = smicore.Runner

// Spec is what differs between the vendor receivers.
type Spec struct {
	Type      component.Type
	Stability component.StabilityLevel
	ScopeName string // the receiver's import path
	// SMI is the vendor package's collection spec (its SMISpec): the tool
	// names (each replaced by tool_path when set), commands and parsers.
	SMI smicore.Spec
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
		run = smicore.NewExecRunner(spec.SMI.ToolNames(), c.ToolPath, c.Env)
	}
	sc := newScraper(scraperSettings{
		Vendor:      spec.SMI.Vendor,
		Collect:     func(ctx context.Context) (*inventory.Snapshot, error) { return smicore.Collect(ctx, spec.SMI, run) },
		Unavailable: smicore.Unavailable,
		Metrics:     c.MetricsBuilderConfig,
		ScopeName:   spec.ScopeName,
		Version:     set.BuildInfo.Version,
		Logger:      set.Logger,
	})
	s, err := scraper.NewMetrics(sc.Scrape, scraper.WithStart(sc.Start))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", spec.Type, err)
	}
	return scraperhelper.NewMetricsController(&c.ControllerConfig, set, next,
		scraperhelper.AddMetricsScraper(spec.Type, s))
}
