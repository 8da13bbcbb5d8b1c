package dashboards

import "github.com/grafana/grafana-foundation-sdk/go/dashboard"

// tasksBoard: the queue, wait time, throughput and failures.
func tasksBoard() *dashboard.DashboardBuilder {
	return newBoard("heteroflow-tasks", "HeteroFlow · Tasks and queue / 任务与队列",
		"Queue length, wait time until placement, throughput and failures. / 队列长度、等待时间、吞吐与失败。").
		WithRow(dashboard.NewRowBuilder("Queue / 队列")).
		WithPanel(graph("Queued tasks", "Tasks waiting for placement at each tick. / 排队任务数。", unitNone, half,
			q(`sum(heteroflow_scheduler_queue_length{`+srvSel+`})`, "queued")).Min(0)).
		WithPanel(graph("Admissions", "Submitted tasks admitted to the queue or refused, per second. / 任务准入速率。", unitOps, half,
			q(`sum by (to) (rate(heteroflow_scheduler_admissions_total{`+srvSel+`}[$__rate_interval]))`, "{{to}}")).Min(0)).
		WithPanel(graph("Wait until placed", "Time from submission to bind (p50, p95) by tenant. / 从提交到调度的等待时间。", unitSeconds, half,
			q(`histogram_quantile(0.5, sum by (le, tenant) (rate(heteroflow_task_wait_seconds_bucket{`+tenantSel+`}[$__rate_interval])))`, "p50 {{tenant}}"),
			q(`histogram_quantile(0.95, sum by (le, tenant) (rate(heteroflow_task_wait_seconds_bucket{`+tenantSel+`}[$__rate_interval])))`, "p95 {{tenant}}")).Min(0)).
		WithPanel(graph("Mean wait until placed", "Average wait over the window by tenant. / 平均等待时间。", unitSeconds, half,
			q(`sum by (tenant) (increase(heteroflow_task_wait_seconds_sum{`+tenantSel+`}[$__range])) / sum by (tenant) (increase(heteroflow_task_wait_seconds_count{`+tenantSel+`}[$__range]))`, "{{tenant}}")).Min(0)).
		WithRow(dashboard.NewRowBuilder("Throughput and failures / 吞吐与失败")).
		WithPanel(graph("Task outcomes", "Tasks ending per second by final state, as agents report them. / 各结束状态的任务速率。", unitOps, half,
			q(`sum by (state) (rate(heteroflow_task_transitions_total{`+srvSel+`, state=~"succeeded|failed|cancelled|timed_out"}[$__rate_interval]))`, "{{state}}")).Min(0)).
		WithPanel(graph("Tasks started", "Tasks their agents started, per second. / 任务启动速率。", unitOps, half,
			q(`sum(rate(heteroflow_task_transitions_total{`+srvSel+`, state="running"}[$__rate_interval]))`, "started")).Min(0)).
		WithPanel(single("Failure ratio", "Failed and timed-out tasks over all ended tasks in the window. / 失败率。", unitRatio, third,
			q(`sum(increase(heteroflow_task_transitions_total{`+srvSel+`, state=~"failed|timed_out"}[$__range])) / sum(increase(heteroflow_task_transitions_total{`+srvSel+`, state=~"succeeded|failed|cancelled|timed_out"}[$__range]))`, "failed")).
			Thresholds(thresholds(0.05, 0.2))).
		WithPanel(single("Retries", "Failed or timed-out tasks requeued in the window. / 重试次数。", unitNone, third,
			q(`sum(increase(heteroflow_task_retries_total{`+srvSel+`}[$__range]))`, "retries"))).
		WithPanel(single("Preemptions", "Tasks preempted in the window. / 抢占次数。", unitNone, third,
			q(`sum(increase(heteroflow_preemptions_total{`+srvSel+`}[$__range]))`, "preempted"))).
		WithPanel(graph("Devices held by tenant", "Compute share held by each tenant's placed tasks. / 各租户占用的设备份额。", unitNone, full,
			q(`sum by (tenant) (heteroflow_allocated_devices{`+allocSel+`})`, "{{tenant}}")).Min(0))
}
