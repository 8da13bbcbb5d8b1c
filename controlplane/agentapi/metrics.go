package agentapi

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the node gauges and agent request counters exported on the
// server's /metrics (client_golang, the server's registry).
type metrics struct {
	up         *prometheus.GaugeVec
	heartbeats prometheus.Counter
	statuses   *prometheus.CounterVec
	assignLat  prometheus.Histogram
	// transitions counts task state changes agents reported (the tasks
	// dashboard's throughput and failures).
	transitions *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		up: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "heteroflow_node_up",
			Help: "1 when the node's agent is heard from, 0 after the offline silence."}, []string{"node", "hostname"}),
		heartbeats: prometheus.NewCounter(prometheus.CounterOpts{Name: "heteroflow_agent_heartbeats_total",
			Help: "Heartbeats received from node agents."}),
		statuses: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "heteroflow_agent_status_updates_total",
			Help: "Agent outbox entries received, by outcome (applied, duplicate)."}, []string{"outcome"}),
		assignLat: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "heteroflow_assignment_delivery_seconds",
			Help:    "Time from storing an assignment to handing it to the agent.",
			Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 5, 30}}),
		transitions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "heteroflow_task_transitions_total",
			Help: "Task state changes applied from agent reports, by the state entered (running, succeeded, failed, cancelled, timed_out)."},
			[]string{"state"}),
	}
	for _, c := range []prometheus.Collector{m.up, m.heartbeats, m.statuses, m.assignLat, m.transitions} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}
