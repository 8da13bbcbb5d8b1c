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
	bindSplits  prometheus.Counter
	retries     prometheus.Counter
	preemptions prometheus.Counter
	// The series the Grafana scheduler and tasks dashboards chart.
	cycle       *prometheus.HistogramVec // one framework cycle, by result
	reasons     *prometheus.CounterVec   // unschedulable cycles by refusal reason
	pluginScore *prometheus.HistogramVec // each plugin's raw score for the winning node
	wait        *prometheus.HistogramVec // submission to bind, by tenant
	allocated   *prometheus.GaugeVec     // devices held by placed tasks (compute share)
	heldSeen    map[heldKey]bool         // allocated series ever set (kept at 0 once released)
	defragMoves *prometheus.CounterVec   // tasks requeued by defragmentation, by trigger
	defragRuns  *prometheus.CounterVec   // policy runs by outcome
	defragScore *prometheus.GaugeVec     // the last run's fragmentation score before and planned after
}

// heldKey is one series of heteroflow_allocated_devices.
type heldKey struct{ node, vendor, tenant string }

func newMetrics(reg prometheus.Registerer, _ *Service) (*metrics, error) {
	m := &metrics{
		leader: prometheus.NewGauge(prometheus.GaugeOpts{Name: "heteroflow_scheduler_leader",
			Help: "1 when this server holds the scheduler lease and runs the loop."}),
		queue: prometheus.NewGauge(prometheus.GaugeOpts{Name: "heteroflow_scheduler_queue_length",
			Help: "Queued tasks at the last tick."}),
		frag: prometheus.NewGauge(prometheus.GaugeOpts{Name: "heteroflow_fragmentation_score",
			Help: "Share of free device compute stranded on partly used devices, 0..1 (0 = all free capacity is on whole free devices); partition room a recently demanded MIG profile or vNPU template can take is not stranded."}),
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
		bindSplits: prometheus.NewCounter(prometheus.CounterOpts{Name: "heteroflow_scheduler_bind_batch_splits_total",
			Help: "Bind batches refused as a whole because a task changed meanwhile, then bound task by task."}),
		retries: prometheus.NewCounter(prometheus.CounterOpts{Name: "heteroflow_task_retries_total",
			Help: "Failed or timed-out tasks requeued for another attempt."}),
		preemptions: prometheus.NewCounter(prometheus.CounterOpts{Name: "heteroflow_preemptions_total",
			Help: "Tasks preempted (requeued to make room for higher priority)."}),
		cycle: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "heteroflow_scheduling_cycle_duration_seconds",
			Help:    "Duration of one scheduling cycle (filter, assign, score, reserve) by result (placed, unschedulable, error).",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, 1}}, []string{"result"}),
		reasons: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "heteroflow_scheduler_unschedulable_reasons_total",
			Help: "Unschedulable cycles by the reason nodes were refused (one count per reason per cycle)."}, []string{"reason"}),
		pluginScore: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "heteroflow_scheduler_plugin_score",
			Help:    "Raw score in [0,100] each score plugin gave the node a placement went to.",
			Buckets: prometheus.LinearBuckets(10, 10, 10)}, []string{"plugin"}),
		wait: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "heteroflow_task_wait_seconds",
			Help:    "Time from a task's submission to its placement being bound, by tenant.",
			Buckets: []float64{.1, .5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 14400}}, []string{"tenant"}),
		allocated: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "heteroflow_allocated_devices",
			Help: "Devices held by placed tasks, as compute share (a half slice counts 0.5), by node, vendor and tenant."},
			[]string{"node", "vendor", "tenant"}),
		defragMoves: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "heteroflow_defrag_moves_total",
			Help: "Restartable Bronze tasks requeued to free whole devices, by trigger (policy, manual)."}, []string{"trigger"}),
		defragRuns: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "heteroflow_defrag_runs_total",
			Help: "Defragmentation policy runs by outcome (executed, nothing_movable, below_threshold, quiet_hours, rate_limited)."}, []string{"result"}),
		defragScore: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "heteroflow_defrag_fragmentation_score",
			Help: "Fragmentation score of the last defragmentation that moved tasks: before it, and as planned after it (0..1)."}, []string{"when"}),
	}
	for _, c := range []prometheus.Collector{m.leader, m.queue, m.frag, m.devices, m.unaccounted, m.attempts,
		m.admissions, m.releases, m.binds, m.bindSplits, m.retries, m.preemptions, m.cycle, m.reasons, m.pluginScore, m.wait, m.allocated,
		m.defragMoves, m.defragRuns, m.defragScore} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// observe refreshes the gauges from the live cluster (after each tick).
func (m *metrics) observe(s *Service) {
	st := deviceStates(s.snap, partitionDemandOf(s.shapes.reqs))
	m.frag.Set(st.score())
	m.devices.WithLabelValues("free").Set(float64(st.free))
	m.devices.WithLabelValues("fragmented").Set(float64(st.fragmented))
	m.devices.WithLabelValues("allocated").Set(float64(st.allocated))
	held := map[heldKey]float64{}
	for _, p := range s.snap.placed {
		for i, sl := range p.slices {
			vendor := ""
			if i < len(p.vendor) {
				vendor = p.vendor[i]
			}
			held[heldKey{p.node, vendor, p.tenant}] += float64(sl.ComputeMilli) / 1000 // milli → devices
		}
	}
	// A released holder stays at 0 rather than vanishing, so that
	// avg_over_time over a window (device-hours) counts its idle time.
	if m.heldSeen == nil {
		m.heldSeen = map[heldKey]bool{}
	}
	for k := range held {
		m.heldSeen[k] = true
	}
	for k := range m.heldSeen {
		m.allocated.WithLabelValues(k.node, k.vendor, k.tenant).Set(held[k])
	}
}
