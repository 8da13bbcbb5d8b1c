package hwmetrics

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

func ptr[T any](v T) *T { return &v }

func TestBuilderEmit(t *testing.T) {
	t.Parallel()
	start := time.Unix(1000, 0)
	now := time.Unix(1010, 0)
	dev := &Attributes{ID: "GPU-1", Vendor: "nvidia", Model: "H100", DriverVersion: ptr("550.54"), Index: ptr("0")}

	tests := []struct {
		name    string
		cfg     func(*MetricsBuilderConfig)
		record  func(*MetricsBuilder)
		metrics []string // names in emit order
	}{
		{name: "nothing recorded", record: func(*MetricsBuilder) {}},
		{
			name: "order follows metadata, not recording",
			record: func(mb *MetricsBuilder) {
				mb.RecordInt(HwGpuMemoryLimit, now, 80<<30, dev)
				mb.RecordDouble(HwGpuUtilization, now, 0.5, dev)
			},
			metrics: []string{"hw.gpu.utilization", "hw.gpu.memory.limit"},
		},
		{
			name: "disabled metric dropped",
			cfg:  func(c *MetricsBuilderConfig) { c.Metrics.HwGpuUtilization.Enabled = false },
			record: func(mb *MetricsBuilder) {
				mb.RecordDouble(HwGpuUtilization, now, 0.5, dev)
				mb.RecordDouble(HwGpuTemperature, now, 40, dev)
			},
			metrics: []string{"hw.gpu.temperature"},
		},
		{
			name:   "wrong record kind is ignored",
			record: func(mb *MetricsBuilder) { mb.RecordDouble(HwGpuMemoryUsage, now, 1, dev) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := DefaultMetricsBuilderConfig()
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			mb := NewMetricsBuilder(cfg, "scope", "v1", start)
			tt.record(mb)
			md := mb.Emit()
			var got []string
			if md.ResourceMetrics().Len() > 0 {
				ms := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
				for i := range ms.Len() {
					got = append(got, ms.At(i).Name())
				}
			}
			require.Equal(t, tt.metrics, got)
			require.Equal(t, 0, mb.Emit().ResourceMetrics().Len(), "Emit must reset the builder")
		})
	}
}

func TestBuilderDataPoint(t *testing.T) {
	t.Parallel()
	mb := NewMetricsBuilder(DefaultMetricsBuilderConfig(), "scope", "v1", time.Unix(1000, 0))
	dev := &Attributes{ID: "GPU-1", Vendor: "nvidia", Model: "H100", BusID: ptr("0000:3b:00.0"), SerialNumber: ptr("")}
	mb.RecordInt(HwErrors, time.Unix(1010, 0), 3, dev, AttrErrorType, ErrorTypeECC)
	md := mb.Emit()
	sm := md.ResourceMetrics().At(0).ScopeMetrics().At(0)
	require.Equal(t, "scope", sm.Scope().Name())
	m := sm.Metrics().At(0)
	require.Equal(t, pmetric.MetricTypeSum, m.Type())
	require.True(t, m.Sum().IsMonotonic())
	dp := m.Sum().DataPoints().At(0)
	require.Equal(t, int64(3), dp.IntValue())
	require.Equal(t, int64(1000), dp.StartTimestamp().AsTime().Unix())
	require.Equal(t, map[string]any{
		"hw.id": "GPU-1", "hw.type": "gpu", "hw.vendor": "nvidia", "hw.model": "H100",
		"hw.bus_id": "0000:3b:00.0", "error.type": "ecc",
	}, dp.Attributes().AsRaw(), "nil and empty optional attributes are left out")
}
