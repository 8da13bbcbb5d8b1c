package alerts

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/heteroflow/heteroflow/controlplane"
)

// TaskLister is the store method the task metrics read.
type TaskLister interface {
	ListTasks(ctx context.Context, f controlplane.TaskFilter) ([]*controlplane.Task, int, error)
}

// TaskMetrics exports the task series the shipped task rules read, computed
// from the store at each scrape (the server self-ingests its registry):
//
//	heteroflow_task_failed_recently{task_id,task_name,tenant,node} 1 per task
//	    that failed within FailedWindow (TaskFailed fires once per task and
//	    resolves when the window passes)
//	heteroflow_task_pending_oldest_seconds{tenant} age of the oldest queued task
type TaskMetrics struct {
	Store        TaskLister
	Now          func() time.Time
	FailedWindow time.Duration
	Logger       *slog.Logger
}

var (
	failedDesc = prometheus.NewDesc("heteroflow_task_failed_recently",
		"1 for each task that failed within the last window (15m).", []string{"task_id", "task_name", "tenant", "node"}, nil)
	pendingDesc = prometheus.NewDesc("heteroflow_task_pending_oldest_seconds",
		"Age of the oldest queued task, per tenant.", []string{"tenant"}, nil)
)

// Describe implements prometheus.Collector.
func (m *TaskMetrics) Describe(ch chan<- *prometheus.Desc) { ch <- failedDesc; ch <- pendingDesc }

// scanPages bounds the tasks read per scrape (pages of MaxPageLimit).
const scanPages = 10

// Collect implements prometheus.Collector.
func (m *TaskMetrics) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	now := time.Now()
	if m.Now != nil {
		now = m.Now()
	}
	window := m.FailedWindow
	if window <= 0 {
		window = 15 * time.Minute
	}
	since := now.Add(-window)
	m.each(ctx, controlplane.TaskFilter{States: []controlplane.TaskState{controlplane.TaskFailed}}, func(t *controlplane.Task) {
		end := t.UpdatedAt
		if t.FinishedAt != nil {
			end = *t.FinishedAt
		}
		if end.Before(since) {
			return
		}
		ch <- prometheus.MustNewConstMetric(failedDesc, prometheus.GaugeValue, 1,
			strconv.FormatInt(t.ID, 10), t.Spec.Name, t.Spec.Tenant, t.NodeID)
	})
	oldest := map[string]time.Time{}
	m.each(ctx, controlplane.TaskFilter{States: []controlplane.TaskState{controlplane.TaskQueued}}, func(t *controlplane.Task) {
		if o, ok := oldest[t.Spec.Tenant]; !ok || t.CreatedAt.Before(o) {
			oldest[t.Spec.Tenant] = t.CreatedAt
		}
	})
	for tenant, at := range oldest {
		ch <- prometheus.MustNewConstMetric(pendingDesc, prometheus.GaugeValue, now.Sub(at).Seconds(), tenant)
	}
}

func (m *TaskMetrics) each(ctx context.Context, f controlplane.TaskFilter, fn func(*controlplane.Task)) {
	for p := 0; p < scanPages; p++ {
		f.Page = controlplane.Page{Limit: controlplane.MaxPageLimit, Offset: p * controlplane.MaxPageLimit}
		list, total, err := m.Store.ListTasks(ctx, f)
		if err != nil {
			if m.Logger != nil {
				m.Logger.Warn("task metrics", "err", err)
			}
			return
		}
		for _, t := range list {
			fn(t)
		}
		if f.Page.Offset+len(list) >= total || len(list) == 0 {
			return
		}
	}
}
