package alerts_test

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/alerts"
	"github.com/heteroflow/heteroflow/controlplane"
)

// TestTaskMetrics: a failed task is exported for the failure window and
// the oldest queued task's age per tenant.
func TestTaskMetrics(t *testing.T) {
	e := newEnv(t)
	mk := func(name, tenant string) *controlplane.Task {
		task := &controlplane.Task{Spec: controlplane.TaskSpec{Name: name, Command: []string{"true"}, Tenant: tenant}, Owner: "alice"}
		require.NoError(t, e.store.CreateTask(t.Context(), task))
		return task
	}
	failed := mk("train", "ml")
	_, err := e.store.TransitionTask(t.Context(), controlplane.Transition{TaskID: failed.ID, From: controlplane.TaskSubmitted,
		To: controlplane.TaskFailed, Reason: "exit 1", Actor: "test"})
	require.NoError(t, err)
	queued := mk("wait", "web")
	_, err = e.store.TransitionTask(t.Context(), controlplane.Transition{TaskID: queued.ID, From: controlplane.TaskSubmitted,
		To: controlplane.TaskQueued, Actor: "test"})
	require.NoError(t, err)

	now := time.Now().Add(time.Hour)
	m := &alerts.TaskMetrics{Store: e.store, Now: func() time.Time { return now }, FailedWindow: 2 * time.Hour}
	require.NoError(t, testutil.CollectAndCompare(m, strings.NewReader(`
# HELP heteroflow_task_failed_recently 1 for each task that failed within the last window (15m).
# TYPE heteroflow_task_failed_recently gauge
heteroflow_task_failed_recently{node="",task_id="1",task_name="train",tenant="ml"} 1
`), "heteroflow_task_failed_recently"))
	require.Equal(t, 1, testutil.CollectAndCount(m, "heteroflow_task_pending_oldest_seconds"))
	require.InDelta(t, time.Hour.Seconds(), testutil.ToFloat64(onlyPending{m}), 120)

	m.FailedWindow = time.Minute // the failure is older than the window now
	require.Zero(t, testutil.CollectAndCount(m, "heteroflow_task_failed_recently"))
}

// onlyPending narrows TaskMetrics to its pending gauge for ToFloat64.
type onlyPending struct{ m *alerts.TaskMetrics }

func (o onlyPending) Describe(ch chan<- *prometheus.Desc) { o.m.Describe(ch) }
func (o onlyPending) Collect(ch chan<- prometheus.Metric) {
	all := make(chan prometheus.Metric, 100)
	o.m.Collect(all)
	close(all)
	for m := range all {
		if strings.Contains(m.Desc().String(), "pending_oldest") {
			ch <- m
		}
	}
}
