package daemon

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/agent/protocol"
)

// TestSelfMetricsWriteRequest: the agent's counters, gauges and process
// metrics become one remote-write request, every series labelled with the
// agent job and its node, stamped with the push time.
func TestSelfMetricsWriteRequest(t *testing.T) {
	a := &Agent{tasks: map[string]*task{"1/0": {spec: protocol.TaskSpec{TaskID: 1}}}}
	m := newSelfMetrics(a)
	m.inc("heteroflow_agent_heartbeats_sent_total", "result", "ok")
	m.inc("heteroflow_agent_heartbeats_sent_total", "result", "ok")
	m.inc("heteroflow_agent_heartbeats_sent_total", "result", "failed")
	now := time.UnixMilli(1_700_000_000_000)
	wr, err := m.writeRequest("node-a", now)
	require.NoError(t, err)

	got := map[string]float64{}
	for _, ts := range wr.Timeseries {
		labels := map[string]string{}
		for i, l := range ts.Labels {
			labels[l.Name] = l.Value
			if i > 0 {
				require.Less(t, ts.Labels[i-1].Name, l.Name, "labels sorted")
			}
		}
		require.Equal(t, SelfJob, labels["job"])
		require.Equal(t, "node-a", labels["node"])
		require.NotEmpty(t, labels["instance"])
		require.Len(t, ts.Samples, 1)
		require.Equal(t, now.UnixMilli(), ts.Samples[0].Timestamp)
		key := labels["__name__"]
		if r := labels["result"]; r != "" {
			key += "/" + r
		}
		got[key] = ts.Samples[0].Value
	}
	require.Equal(t, 2.0, got["heteroflow_agent_heartbeats_sent_total/ok"])
	require.Equal(t, 1.0, got["heteroflow_agent_heartbeats_sent_total/failed"])
	require.Equal(t, 1.0, got["heteroflow_agent_tasks_running"])
	require.Equal(t, 0.0, got["heteroflow_agent_outbox_pending"])
	require.Contains(t, got, "process_resident_memory_bytes")
	require.Contains(t, got, "process_cpu_seconds_total")
	require.Contains(t, got, "go_goroutines")
}
