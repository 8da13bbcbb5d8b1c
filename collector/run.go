package collector

import (
	"context"
	"fmt"
	"path/filepath"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/confmap/provider/yamlprovider"
	"go.opentelemetry.io/collector/otelcol"
)

// Settings say where the config comes from and how the collector presents
// itself.
type Settings struct {
	// ConfigURIs are merged in order: "file:/path.yaml", "yaml:<inline>",
	// "env:VAR". Use FileURI / YAMLURI to build them. ${VAR} and
	// ${env:VAR} inside a config resolve from the environment.
	ConfigURIs []string
	Version    string
	// Embedded disables the collector's own SIGINT/SIGTERM handling: the
	// host process (the agent) stops it by cancelling Run's context.
	Embedded bool
}

// FileURI is the config URI of a YAML file.
func FileURI(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("config path %q: %w", path, err)
	}
	return "file:" + abs, nil
}

// YAMLURI is the config URI of an inline YAML document.
func YAMLURI(doc []byte) string { return "yaml:" + string(doc) }

// New builds the collector; it reads its config when run.
func New(set Settings) (*otelcol.Collector, error) {
	if len(set.ConfigURIs) == 0 {
		return nil, fmt.Errorf("collector: no config given")
	}
	version := set.Version
	if version == "" {
		version = "dev"
	}
	return otelcol.NewCollector(otelcol.CollectorSettings{
		BuildInfo: component.BuildInfo{
			Command: "heteroflow collector", Description: "HeteroFlow collector", Version: version,
		},
		Factories:               Components,
		DisableGracefulShutdown: set.Embedded,
		ConfigProviderSettings: otelcol.ConfigProviderSettings{ResolverSettings: confmap.ResolverSettings{
			URIs: set.ConfigURIs,
			ProviderFactories: []confmap.ProviderFactory{
				fileprovider.NewFactory(), envprovider.NewFactory(), yamlprovider.NewFactory(),
			},
			DefaultScheme: "env",
		}},
	})
}

// Run runs the collector until ctx is cancelled (or, when not Embedded, a
// signal arrives) and returns the first error: a bad config is returned
// before anything starts.
func Run(ctx context.Context, set Settings) error {
	col, err := New(set)
	if err != nil {
		return err
	}
	if err := col.Run(ctx); err != nil {
		return fmt.Errorf("collector: %w", err)
	}
	return nil
}

// Validate loads and validates the config without starting anything.
func Validate(ctx context.Context, set Settings) error {
	col, err := New(set)
	if err != nil {
		return err
	}
	if err := col.DryRun(ctx); err != nil {
		return fmt.Errorf("collector config: %w", err)
	}
	return nil
}
