// Package smireceivertest is the lifecycle test every vendor receiver runs:
// metadata.yaml agrees with the factory, the default config validates, a
// receiver starts, scrapes through the injected Runner, emits hw.gpu.*
// metrics and shuts down, and a missing CLI yields no metrics and no error.
package smireceivertest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.yaml.in/yaml/v3"

	"github.com/heteroflow/heteroflow/receivers/internal/smicore"
	"github.com/heteroflow/heteroflow/receivers/internal/smireceiver"
)

// NewFactory is a vendor package's newReceiverFactory.
type NewFactory func(run smireceiver.Runner) receiver.Factory

// Run runs the checks for one vendor receiver. fixture is a captured output
// of the primary command of spec's first tool (a file in the package's
// testdata); the fake CLI prints it for that command and behaves as not
// installed for any other, so secondary commands become scrape warnings.
func Run(t *testing.T, newFactory NewFactory, spec smicore.Spec, fixture string) {
	out, err := os.ReadFile(fixture)
	require.NoError(t, err)
	want, err := smicore.Parse(spec, spec.Tools[0].Commands[0].Form, out)
	require.NoError(t, err)
	t.Run("metadata", func(t *testing.T) { checkMetadata(t, newFactory(nil)) })
	t.Run("config", func(t *testing.T) { checkConfig(t, newFactory(nil)) })
	t.Run("lifecycle", func(t *testing.T) { checkLifecycle(t, newFactory, spec, out, len(want.Devices)) })
	t.Run("missing tool", func(t *testing.T) { checkMissingTool(t, newFactory) })
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

func checkLifecycle(t *testing.T, newFactory NewFactory, spec smicore.Spec, out []byte, devices int) {
	primary := spec.Tools[0]
	run := func(_ context.Context, name string, args ...string) ([]byte, error) {
		if name == primary.Name && slices.Equal(args, primary.Commands[0].Args) {
			return out, nil
		}
		return nil, fmt.Errorf("%w: %s %v", smicore.ErrToolNotFound, name, args)
	}
	sink, stop := start(t, newFactory, run)
	defer stop()
	require.Eventually(t, func() bool { return sink.DataPointCount() > 0 }, 10*time.Second, 5*time.Millisecond)
	ids := map[string]bool{}
	md := sink.AllMetrics()[0]
	ms := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	for i := range ms.Len() {
		m := ms.At(i)
		require.True(t, strings.HasPrefix(m.Name(), "hw."), "metric %s", m.Name())
		var dps pmetric.NumberDataPointSlice
		switch m.Type() {
		case pmetric.MetricTypeGauge:
			dps = m.Gauge().DataPoints()
		case pmetric.MetricTypeSum:
			dps = m.Sum().DataPoints()
		default:
			t.Fatalf("%s: unexpected metric type %s", m.Name(), m.Type())
		}
		for j := range dps.Len() {
			attrs := dps.At(j).Attributes()
			v, ok := attrs.Get("hw.vendor")
			require.True(t, ok, "%s lacks hw.vendor", m.Name())
			require.Equal(t, spec.Vendor, v.Str())
			if _, parent := attrs.Get("hw.parent"); !parent {
				id, _ := attrs.Get("hw.id")
				ids[id.Str()] = true
			}
		}
	}
	require.Len(t, ids, devices, "one hw.id per device the parser found")
	checkGolden(t, md)
}

// checkGolden compares one scrape of the fixture with the vendor's expected
// metrics (testdata/expected_metrics.yaml: names, units, types, values and
// attributes; timestamps and ordering aside). UPDATE_GOLDEN=1 rewrites it
// from the receiver's output, to be reviewed in the diff.
func checkGolden(t *testing.T, got pmetric.Metrics) {
	path := filepath.Join("testdata", "expected_metrics.yaml")
	if os.Getenv("UPDATE_GOLDEN") == "1" {
		require.NoError(t, golden.WriteMetrics(t, path, got))
	}
	want, err := golden.ReadMetrics(path)
	require.NoError(t, err, "expected metrics missing: run the test once with UPDATE_GOLDEN=1 and review the file")
	require.NoError(t, pmetrictest.CompareMetrics(want, got,
		pmetrictest.IgnoreTimestamp(), pmetrictest.IgnoreStartTimestamp(),
		pmetrictest.IgnoreResourceMetricsOrder(), pmetrictest.IgnoreScopeMetricsOrder(),
		pmetrictest.IgnoreMetricsOrder(), pmetrictest.IgnoreMetricDataPointsOrder()))
}

func checkMissingTool(t *testing.T, newFactory NewFactory) {
	var calls atomic.Int32
	run := func(context.Context, string, ...string) ([]byte, error) {
		calls.Add(1)
		return nil, smicore.ErrToolNotFound
	}
	sink, stop := start(t, newFactory, run)
	require.Eventually(t, func() bool { return calls.Load() >= 3 }, 10*time.Second, 5*time.Millisecond)
	stop()
	require.Zero(t, sink.DataPointCount(), "a missing CLI must yield no metrics")
}
