package hostresource

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"
)

// Type is the processor's config name.
var Type = component.MustNewType("host_resource")

// NewFactory returns the host_resource processor factory (metrics only).
func NewFactory() processor.Factory {
	return processor.NewFactory(Type,
		func() component.Config { return &Config{} },
		processor.WithMetrics(createMetrics, component.StabilityLevelAlpha))
}

func createMetrics(ctx context.Context, set processor.Settings, cfg component.Config,
	next consumer.Metrics,
) (processor.Metrics, error) {
	c := cfg.(*Config)
	attrs, err := Detect(c)
	if err != nil {
		return nil, err
	}
	p := &proc{attrs: attrs, override: c.Override}
	return processorhelper.NewMetrics(ctx, set, cfg, next, p.process,
		processorhelper.WithCapabilities(consumer.Capabilities{MutatesData: true}))
}

type proc struct {
	attrs    [][2]string
	override bool
}

func (p *proc) process(_ context.Context, md pmetric.Metrics) (pmetric.Metrics, error) {
	rms := md.ResourceMetrics()
	for i := range rms.Len() {
		apply(rms.At(i).Resource().Attributes(), p.attrs, p.override)
	}
	return md, nil
}

func apply(m pcommon.Map, attrs [][2]string, override bool) {
	for _, kv := range attrs {
		if _, ok := m.Get(kv[0]); ok && !override {
			continue
		}
		m.PutStr(kv[0], kv[1])
	}
}

// Detect reads the host attributes once; a missing machine id is skipped
// (host.id absent, not empty), a failing hostname is an error.
func Detect(c *Config) ([][2]string, error) {
	name := c.HostName
	if name == "" {
		h, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("host_resource: hostname: %w", err)
		}
		name = h
	}
	attrs := [][2]string{{"host.name", name}, {"os.type", runtime.GOOS}, {"host.arch", arch(runtime.GOARCH)}}
	path := c.MachineIDPath
	if path == "" {
		path = DefaultMachineIDPath
	}
	b, err := os.ReadFile(path)
	switch {
	case err == nil && strings.TrimSpace(string(b)) != "":
		attrs = append(attrs, [2]string{"host.id", strings.TrimSpace(string(b))})
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("host_resource: machine id: %w", err)
	}
	return attrs, nil
}

// arch maps GOARCH to the semconv host.arch values where they differ.
func arch(goarch string) string {
	switch goarch {
	case "386":
		return "x86"
	case "arm":
		return "arm32"
	case "ppc64le":
		return "ppc64"
	}
	return goarch
}
