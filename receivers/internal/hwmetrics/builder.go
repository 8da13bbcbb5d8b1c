package hwmetrics

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// Attributes are the data-point attributes of one device or partition.
// Optional values are pointers: nil leaves the attribute out, so an unknown
// driver version is absent, never "".
type Attributes struct {
	ID              string
	Vendor          string
	Model           string
	DriverVersion   *string
	FirmwareVersion *string
	SerialNumber    *string
	Index           *string
	BusID           *string
	// Partition only.
	Parent           *string
	PartitionKind    *string
	PartitionID      *string
	PartitionProfile *string
}

// putTo writes the attributes into m; hw.type is always "gpu".
func (a *Attributes) putTo(m pcommon.Map) {
	m.EnsureCapacity(12)
	m.PutStr(AttrID, a.ID)
	m.PutStr(AttrType, TypeGPU)
	m.PutStr(AttrVendor, a.Vendor)
	if a.Model != "" {
		m.PutStr(AttrModel, a.Model)
	}
	for _, kv := range [...]struct {
		key string
		val *string
	}{
		{AttrDriverVersion, a.DriverVersion}, {AttrFirmwareVersion, a.FirmwareVersion},
		{AttrSerialNumber, a.SerialNumber}, {AttrIndex, a.Index}, {AttrBusID, a.BusID},
		{AttrParent, a.Parent}, {AttrPartitionKind, a.PartitionKind}, {AttrPartitionID, a.PartitionID},
		{AttrPartitionProfile, a.PartitionProfile},
	} {
		if kv.val != nil && *kv.val != "" {
			m.PutStr(kv.key, *kv.val)
		}
	}
}

// MetricsBuilder collects data points during one scrape and emits them as
// one ResourceMetrics. It is not safe for concurrent use (one per scraper).
type MetricsBuilder struct {
	enabled   [numMetrics]bool
	metrics   [numMetrics]pmetric.Metric
	present   [numMetrics]bool
	start     pcommon.Timestamp
	scopeName string
	version   string
}

// NewMetricsBuilder returns a builder for the enabled metrics. scopeName is
// the receiver's import path (the instrumentation scope), start the
// receiver's start time (start time of cumulative sums).
func NewMetricsBuilder(cfg MetricsBuilderConfig, scopeName, version string, start time.Time) *MetricsBuilder {
	return &MetricsBuilder{
		enabled:   cfg.Metrics.enabled(),
		start:     pcommon.NewTimestampFromTime(start),
		scopeName: scopeName,
		version:   version,
	}
}

// metric returns the metric id's buffer, creating it on first use in this
// scrape so that metrics without data points are never emitted.
func (mb *MetricsBuilder) metric(id MetricID) pmetric.Metric {
	if mb.present[id] {
		return mb.metrics[id]
	}
	d := defs[id]
	m := pmetric.NewMetric()
	m.SetName(d.name)
	m.SetDescription(d.description)
	m.SetUnit(d.unit)
	switch d.kind {
	case gaugeDouble:
		m.SetEmptyGauge()
	case upDownInt, counterInt:
		s := m.SetEmptySum()
		s.SetIsMonotonic(d.kind == counterInt)
		s.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	}
	mb.metrics[id], mb.present[id] = m, true
	return m
}

// RecordDouble adds a data point to a gauge metric; disabled metrics drop it.
func (mb *MetricsBuilder) RecordDouble(id MetricID, ts time.Time, v float64, a *Attributes) {
	if !mb.enabled[id] || defs[id].kind != gaugeDouble {
		return
	}
	dp := mb.metric(id).Gauge().DataPoints().AppendEmpty()
	dp.SetTimestamp(pcommon.NewTimestampFromTime(ts))
	dp.SetDoubleValue(v)
	a.putTo(dp.Attributes())
}

// RecordInt adds a data point to a sum metric; extra are attributes beyond
// the device's own (error.type, hw.state). Disabled metrics drop it.
func (mb *MetricsBuilder) RecordInt(id MetricID, ts time.Time, v int64, a *Attributes, extra ...string) {
	if !mb.enabled[id] || defs[id].kind == gaugeDouble {
		return
	}
	dp := mb.metric(id).Sum().DataPoints().AppendEmpty()
	dp.SetStartTimestamp(mb.start)
	dp.SetTimestamp(pcommon.NewTimestampFromTime(ts))
	dp.SetIntValue(v)
	a.putTo(dp.Attributes())
	for i := 0; i+1 < len(extra); i += 2 {
		dp.Attributes().PutStr(extra[i], extra[i+1])
	}
}

// Emit returns everything recorded since the last Emit as one
// ResourceMetrics (metrics in metadata.yaml order) and resets the builder.
// With nothing recorded it returns empty Metrics (no ResourceMetrics).
func (mb *MetricsBuilder) Emit() pmetric.Metrics {
	out := pmetric.NewMetrics()
	has := false
	for _, p := range mb.present {
		has = has || p
	}
	if !has {
		return out
	}
	sm := out.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty()
	sm.Scope().SetName(mb.scopeName)
	sm.Scope().SetVersion(mb.version)
	ms := sm.Metrics()
	ms.EnsureCapacity(int(numMetrics))
	for id := range numMetrics {
		if mb.present[id] {
			mb.metrics[id].MoveTo(ms.AppendEmpty())
			mb.present[id] = false
		}
	}
	return out
}
