package smireceiver

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/scraper/scrapererror"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/heteroflow/heteroflow/receivers/internal/hwmetrics"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

func ptr[T any](v T) *T { return &v }

var errNoTool = errors.New("tool not found")

func twoDevices() *inventory.Snapshot {
	return &inventory.Snapshot{
		Vendor:        inventory.VendorNVIDIA,
		DriverVersion: ptr("550.54.15"),
		Devices: []inventory.Device{
			{
				Index: 0, UUID: ptr("GPU-aaa"), Model: "NVIDIA H100 80GB HBM3",
				MemoryTotalMiB: ptr(int64(81559)), MemoryUsedMiB: ptr(int64(1024)),
				UtilizationPercent: ptr(37.0), TemperatureCelsius: ptr(41.0), PowerWatts: ptr(120.5),
				BusID: ptr("0000:3b:00.0"), Health: ptr("ok"), ECCErrors: ptr(int64(2)),
				Partitions: []inventory.Partition{{Kind: "mig", ID: "1", Profile: ptr("1g.10gb"), MemoryTotalMiB: ptr(int64(9984))}},
			},
			// Everything unknown but the model: only what is known is emitted.
			{Index: 1, Model: "NVIDIA H100 80GB HBM3"},
		},
	}
}

// points maps "metric|hw.id|extra attr" to the data point value.
func points(t *testing.T, md pmetric.Metrics) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	rms := md.ResourceMetrics()
	for i := range rms.Len() {
		ms := rms.At(i).ScopeMetrics().At(0).Metrics()
		for j := range ms.Len() {
			m := ms.At(j)
			switch m.Type() {
			case pmetric.MetricTypeGauge:
				dps := m.Gauge().DataPoints()
				for k := range dps.Len() {
					id, _ := dps.At(k).Attributes().Get("hw.id")
					out[m.Name()+"|"+id.Str()] = dps.At(k).DoubleValue()
				}
			case pmetric.MetricTypeSum:
				dps := m.Sum().DataPoints()
				for k := range dps.Len() {
					id, _ := dps.At(k).Attributes().Get("hw.id")
					key := m.Name() + "|" + id.Str()
					if st, ok := dps.At(k).Attributes().Get("hw.state"); ok {
						key += "|" + st.Str()
					}
					out[key] = float64(dps.At(k).IntValue())
				}
			default:
				t.Fatalf("unexpected metric type %v", m.Type())
			}
		}
	}
	return out
}

func testScraper(t testing.TB, collect CollectFunc, now func() time.Time, logger *zap.Logger) *Scraper {
	t.Helper()
	s := newScraper(scraperSettings{
		Vendor: inventory.VendorNVIDIA, Collect: collect,
		Unavailable: func(err error) bool { return errors.Is(err, errNoTool) },
		Metrics:     hwmetrics.DefaultMetricsBuilderConfig(), ScopeName: "test", Logger: logger, Now: now,
	})
	require.NoError(t, s.Start(context.Background(), componenttest.NewNopHost()))
	return s
}

func TestScrapeEmitsKnownValuesOnly(t *testing.T) {
	t.Parallel()
	s := testScraper(t, func(context.Context) (*inventory.Snapshot, error) { return twoDevices(), nil }, nil, nil)
	md, err := s.Scrape(context.Background())
	require.NoError(t, err)
	require.Equal(t, map[string]float64{
		"hw.gpu.utilization|GPU-aaa":        0.37,
		"hw.gpu.memory.usage|GPU-aaa":       1024 << 20,
		"hw.gpu.memory.limit|GPU-aaa":       81559 << 20,
		"hw.gpu.memory.utilization|GPU-aaa": 1024.0 / 81559,
		"hw.gpu.temperature|GPU-aaa":        41,
		"hw.gpu.power.draw|GPU-aaa":         120.5,
		"hw.errors|GPU-aaa":                 2,
		"hw.status|GPU-aaa|ok":              1,
		"hw.status|GPU-aaa|degraded":        0,
		"hw.status|GPU-aaa|failed":          0,
		// Partition hw.id is parent/kind-id when it has no UUID of its own.
		"hw.gpu.partition.memory.limit|GPU-aaa/mig-1": 9984 << 20,
		// Device 1 knows nothing: no point at all, in particular no 0.
	}, points(t, md))
}

func TestScrapeOutcomes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		collect    CollectFunc
		wantPoints bool
		wantErr    bool
		partial    bool
	}{
		{
			name: "broken device is a partial error",
			collect: func(context.Context) (*inventory.Snapshot, error) {
				s := twoDevices()
				s.Warnings = []string{"gpu 2: unparseable memory \"garbage\""}
				return s, nil
			},
			wantPoints: true, wantErr: true, partial: true,
		},
		{
			name: "snapshot plus error is a partial error",
			collect: func(context.Context) (*inventory.Snapshot, error) {
				return twoDevices(), errors.New("topo -m failed")
			},
			wantPoints: true, wantErr: true, partial: true,
		},
		{
			name:    "failed CLI is a scrape error",
			collect: func(context.Context) (*inventory.Snapshot, error) { return nil, errors.New("exit status 9") },
			wantErr: true,
		},
		{
			name:    "missing tool is no metrics and no error",
			collect: func(context.Context) (*inventory.Snapshot, error) { return nil, errNoTool },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			md, err := testScraper(t, tt.collect, nil, nil).Scrape(context.Background())
			require.Equal(t, tt.wantErr, err != nil, "err: %v", err)
			require.Equal(t, tt.partial, scrapererror.IsPartialScrapeError(err))
			require.Equal(t, tt.wantPoints, md.DataPointCount() > 0)
		})
	}
}

func TestUnavailableIsLoggedRateLimited(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zapcore.InfoLevel)
	clock := time.Unix(0, 0)
	var fail bool
	collect := func(context.Context) (*inventory.Snapshot, error) {
		if fail {
			return nil, errNoTool
		}
		return twoDevices(), nil
	}
	s := testScraper(t, collect, func() time.Time { return clock }, zap.New(core))

	fail = true
	for range 5 { // 5 scrapes, 10 s apart: one log
		_, err := s.Scrape(context.Background())
		require.NoError(t, err)
		clock = clock.Add(10 * time.Second)
	}
	require.Equal(t, 1, logs.FilterLevelExact(zapcore.ErrorLevel).Len())

	clock = clock.Add(DefaultLogEvery) // still missing after LogEvery: logged again
	_, _ = s.Scrape(context.Background())
	require.Equal(t, 2, logs.FilterLevelExact(zapcore.ErrorLevel).Len())

	fail = false // recovery is logged once, and a new loss is logged at once
	_, _ = s.Scrape(context.Background())
	require.Equal(t, 1, logs.FilterMessageSnippet("available again").Len())
	fail = true
	_, _ = s.Scrape(context.Background())
	require.Equal(t, 3, logs.FilterLevelExact(zapcore.ErrorLevel).Len())
}

func TestScrapeBeforeStart(t *testing.T) {
	t.Parallel()
	s := newScraper(scraperSettings{Collect: func(context.Context) (*inventory.Snapshot, error) { return twoDevices(), nil }})
	_, err := s.Scrape(context.Background())
	require.Error(t, err)
}
