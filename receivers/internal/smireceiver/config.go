package smireceiver

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"go.opentelemetry.io/collector/scraper/scraperhelper"

	"github.com/heteroflow/heteroflow/receivers/internal/hwmetrics"
)

// Config is every vendor receiver's configuration:
//
//	nvidia_smi:
//	  collection_interval: 10s
//	  timeout: 5s
//	  tool_path: /usr/bin/nvidia-smi   # default: found on PATH
//	  env: {CUDA_VISIBLE_DEVICES: "0,1"}
//	  metrics:
//	    hw.gpu.power.limit: {enabled: false}
type Config struct {
	scraperhelper.ControllerConfig `mapstructure:",squash"`
	hwmetrics.MetricsBuilderConfig `mapstructure:",squash"`
	// ToolPath replaces the vendor CLI found on PATH (absolute path).
	ToolPath string `mapstructure:"tool_path"`
	// Env is added to the CLI's environment (device-selection variables,
	// library paths of a vendor install outside the default prefix).
	Env map[string]string `mapstructure:"env"`
}

// Defaults: a 10 s interval is what the scheduler's load-aware scoring and the
// benchmarks assume; the CLIs answer in well under a second, so a 5 s timeout
// only trips on a hung driver.
const (
	DefaultCollectionInterval = 10 * time.Second
	DefaultTimeout            = 5 * time.Second
)

func createDefaultConfig() *Config {
	cc := scraperhelper.NewDefaultControllerConfig()
	cc.CollectionInterval = DefaultCollectionInterval
	cc.Timeout = DefaultTimeout
	return &Config{ControllerConfig: cc, MetricsBuilderConfig: hwmetrics.DefaultMetricsBuilderConfig()}
}

// Validate checks what the controller config does not (the collector calls
// ControllerConfig.Validate itself: positive interval, non-negative timeout).
func (c *Config) Validate() error {
	var errs []error
	if c.Timeout > c.CollectionInterval && c.CollectionInterval > 0 {
		errs = append(errs, fmt.Errorf("timeout %s is longer than collection_interval %s: scrapes would overlap",
			c.Timeout, c.CollectionInterval))
	}
	if c.ToolPath != "" && !filepath.IsAbs(c.ToolPath) {
		errs = append(errs, fmt.Errorf("tool_path %q must be an absolute path", c.ToolPath))
	}
	for k := range c.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			errs = append(errs, fmt.Errorf("env: invalid variable name %q", k))
		}
	}
	return errors.Join(errs...)
}
