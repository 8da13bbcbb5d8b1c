package metering

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/heteroflow/heteroflow/controlplane"
)

// meterMetrics are the usage counters: they grow by each record the
// metering leader writes, so over any window their increase is the usage
// recorded in it (the ledger's own figures, not a sample). Tenant and
// project are labels; users and tasks are not (unbounded cardinality: the
// reports have them).
type meterMetrics struct {
	device  *prometheus.CounterVec
	memory  *prometheus.CounterVec
	compute *prometheus.CounterVec
	records *prometheus.CounterVec
	budget  *prometheus.GaugeVec
}

var usageLabels = []string{"vendor", "model", "qos", "tenant", "project"}

func newMeterMetrics(reg prometheus.Registerer) (*meterMetrics, error) {
	m := &meterMetrics{
		device: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "heteroflow_billing_device_seconds_total",
			Help: "Allocated device-seconds weighted by each slice's share of its device (dominant of memory and compute share)."},
			usageLabels),
		memory: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "heteroflow_billing_memory_gib_seconds_total",
			Help: "Allocated device memory in GiB-seconds."}, usageLabels),
		compute: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "heteroflow_billing_compute_percent_seconds_total",
			Help: "Allocated compute in percent-seconds (one whole device for one second = 100)."}, usageLabels),
		records: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "heteroflow_billing_usage_records_total",
			Help: "Usage records written by the metering leader."}, []string{"tenant"}),
		budget: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "heteroflow_billing_budget_used_ratio",
			Help: "This month's cost of a tenant or project divided by its monthly budget."}, []string{"tenant", "project"}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.device, m.memory, m.compute, m.records, m.budget} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *meterMetrics) add(recs []*controlplane.UsageRecord) {
	for _, r := range recs {
		l := prometheus.Labels{"vendor": r.Vendor, "model": r.Model, "qos": string(r.QoS), "tenant": r.Tenant, "project": r.Project}
		q := Quantities(r)
		m.device.With(l).Add(q.DeviceHours * 3600)
		m.memory.With(l).Add(q.MemoryGiBHours * 3600)
		m.compute.With(l).Add(q.ComputePercentHours * 3600)
		m.records.WithLabelValues(r.Tenant).Inc()
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
