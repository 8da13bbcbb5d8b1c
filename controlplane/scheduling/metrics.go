package scheduling

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the heteroflow_ scheduling series on the server registry.
type metrics struct {
	leader      prometheus.Gauge
	queue       prometheus.Gauge
	frag        prometheus.Gauge
	devices     *prometheus.GaugeVec
	unaccounted prometheus.Gauge
	attempts    *prometheus.CounterVec
	admissions  *prometheus.CounterVec
	releases    *prometheus.CounterVec
	binds       prometheus.Counter
	retries     prometheus.Counter
	preemptions prometheus.Counter
}

func newMetrics(reg prometheus.Registerer, _ *Service) (*metrics, error) {
	m := &metrics{
		leader: prometheus.NewGauge(prometheus.GaugeOpts{Name: "heteroflow_scheduler_leader",
			Help: "1 when this server holds the scheduler lease and runs the loop."}),
		queue: prometheus.NewGauge(prometheus.GaugeOpts{Name: "heteroflow_scheduler_queue_length",
			Help: "Queued tasks at the last tick."}),
		frag: prometheus.NewGauge(prometheus.GaugeOpts{Name: "heteroflow_fragmentation_score",
			Help: "Share of free device compute stranded on partly used devices, 0..1 (0 = all free capacity is on whole free devices)."}),
		devices: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "heteroflow_devices",
			Help: "Devices of online nodes by allocation state (free, fragmented, allocated)."}, []string{"state"}),
		unaccounted: prometheus.NewGauge(prometheus.GaugeOpts{Name: "heteroflow_ledger_unaccounted_tasks",
			Help: "Placed tasks without ledger rows (assigned outside the scheduler)."}),
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "heteroflow_scheduling_attempts_total",
			Help: "Scheduling cycles by result."}, []string{"result"}),
		admissions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "heteroflow_scheduler_admissions_total",
			Help: "Submitted tasks admitted (queued) or refused (failed)."}, []string{"to"}),
		releases: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "heteroflow_allocations_released_total",
			Help: "Placements released from the ledger, by cause."}, []string{"cause"}),
		binds: prometheus.NewCounter(prometheus.CounterOpts{Name: "heteroflow_scheduler_binds_total",
			Help: "Placements bound (ledger + assignment + transition)."}),
		retries: prometheus.NewCounter(prometheus.CounterOpts{Name: "heteroflow_task_retries_total",
			Help: "Failed or timed-out tasks requeued for another attempt."}),
		preemptions: prometheus.NewCounter(prometheus.CounterOpts{Name: "heteroflow_preemptions_total",
			Help: "Tasks preempted (requeued to make room for higher priority)."}),
	}
	for _, c := range []prometheus.Collector{m.leader, m.queue, m.frag, m.devices, m.unaccounted, m.attempts,
		m.admissions, m.releases, m.binds, m.retries, m.preemptions} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// observe refreshes the gauges from the live cluster (after each tick).
func (m *metrics) observe(s *Service) {
	st := deviceStates(s.snap)
	m.frag.Set(st.score())
	m.devices.WithLabelValues("free").Set(float64(st.free))
	m.devices.WithLabelValues("fragmented").Set(float64(st.fragmented))
	m.devices.WithLabelValues("allocated").Set(float64(st.allocated))
}
