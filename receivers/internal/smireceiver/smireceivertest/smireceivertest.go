// Package smireceivertest is the lifecycle test every vendor receiver runs:
// metadata.yaml agrees with the factory, the default config validates, a
// receiver starts, scrapes through the injected Runner, emits hw.gpu.*
// metrics and shuts down, and a missing CLI yields no metrics and no error.
package smireceivertest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.yaml.in/yaml/v3"

	"github.com/heteroflow/heteroflow/receivers/internal/smireceiver"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// NewFactory is a vendor package's newReceiverFactory.
type NewFactory func(run smireceiver.Runner) receiver.Factory

// Run runs the checks for one vendor receiver; tool is its CLI name.
func Run(t *testing.T, newFactory NewFactory, vendor, tool string) {
	smireceiver.Bind(smireceiver.Binding{Collect: collectOneDevice(tool)})
	t.Run("metadata", func(t *testing.T) { checkMetadata(t, newFactory(nil)) })
	t.Run("config", func(t *testing.T) { checkConfig(t, newFactory(nil)) })
	t.Run("lifecycle", func(t *testing.T) { checkLifecycle(t, newFactory, vendor, tool) })
	t.Run("missing tool", func(t *testing.T) { checkMissingTool(t, newFactory) })
}

// collectOneDevice stands in for smi.Collect: it runs the CLI through run
// and reports one device whose utilisation is the number the CLI printed.
func collectOneDevice(tool string) smireceiver.CollectFunc {
	return func(ctx context.Context, vendor string, run smireceiver.Runner) (*inventory.Snapshot, error) {
		out, err := run(ctx, tool)
		if err != nil {
			return nil, err
		}
		var util float64
		if _, err := fmt.Sscan(strings.TrimSpace(string(out)), &util); err != nil {
			return nil, err
		}
		return &inventory.Snapshot{Vendor: vendor, Devices: []inventory.Device{
			{Index: 0, Model: "test", UtilizationPercent: &util},
		}}, nil
	}
}

func checkMetadata(t *testing.T, f receiver.Factory) {
	raw, err := os.ReadFile("metadata.yaml")
	require.NoError(t, err)
	var md struct {
		Type   string `yaml:"type"`
		Status struct {
			Class     string              `yaml:"class"`
			Stability map[string][]string `yaml:"stability"`
		} `yaml:"status"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &md))
	require.Equal(t, md.Type, f.Type().String())
	require.Equal(t, "receiver", md.Status.Class)
	stab := strings.ToLower(f.MetricsStability().String())
	require.Equal(t, []string{"metrics"}, md.Status.Stability[stab],
		"metadata.yaml stability differs from the factory's %s", stab)
}

func checkConfig(t *testing.T, f receiver.Factory) {
	cfg := f.CreateDefaultConfig().(*smireceiver.Config)
	require.NoError(t, confmap.Validate(cfg))
	require.NoError(t, componenttest.CheckConfigStruct(cfg))
	cfg.ToolPath = "relative/smi"
	require.ErrorContains(t, confmap.Validate(cfg), "absolute")
}

func start(t *testing.T, newFactory NewFactory, run smireceiver.Runner) (*consumertest.MetricsSink, func()) {
	f := newFactory(run)
	cfg := f.CreateDefaultConfig().(*smireceiver.Config)
	cfg.CollectionInterval = 10 * time.Millisecond
	cfg.InitialDelay = 0
	sink := new(consumertest.MetricsSink)
	r, err := f.CreateMetrics(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, sink)
	require.NoError(t, err)
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
	return sink, func() { require.NoError(t, r.Shutdown(context.Background())) }
}

func checkLifecycle(t *testing.T, newFactory NewFactory, vendor, tool string) {
	var calls atomic.Int32
	run := func(_ context.Context, name string, _ ...string) ([]byte, error) {
		if name != tool {
			return nil, errors.New("unexpected tool " + name)
		}
		calls.Add(1)
		return []byte("42\n"), nil
	}
	sink, stop := start(t, newFactory, run)
	defer stop()
	require.Eventually(t, func() bool { return sink.DataPointCount() > 0 }, 10*time.Second, 5*time.Millisecond)
	m := sink.AllMetrics()[0]
	for i := range len(sink.AllMetrics()) {
		if sink.AllMetrics()[i].DataPointCount() > 0 {
			m = sink.AllMetrics()[i]
			break
		}
	}
	metric := m.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics().At(0)
	require.Equal(t, "hw.gpu.utilization", metric.Name())
	dp := metric.Gauge().DataPoints().At(0)
	require.InDelta(t, 0.42, dp.DoubleValue(), 1e-9)
	v, _ := dp.Attributes().Get("hw.vendor")
	require.Equal(t, vendor, v.Str())
}

func checkMissingTool(t *testing.T, newFactory NewFactory) {
	var calls atomic.Int32
	run := func(context.Context, string, ...string) ([]byte, error) {
		calls.Add(1)
		return nil, smireceiver.ErrToolNotFound
	}
	sink, stop := start(t, newFactory, run)
	require.Eventually(t, func() bool { return calls.Load() >= 3 }, 10*time.Second, 5*time.Millisecond)
	stop()
	require.Zero(t, sink.DataPointCount(), "a missing CLI must yield no metrics")
}
