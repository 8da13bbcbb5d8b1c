package dashboards

import "github.com/grafana/grafana-foundation-sdk/go/dashboard"

// schedulerBoard: how the scheduling framework spends its time and decides.
func schedulerBoard() *dashboard.DashboardBuilder {
	return newBoard("heteroflow-scheduler", "HeteroFlow · Scheduler internals / 调度器内部",
		"Cycle latency, placements per second, plugin scores, preemptions and why tasks stay pending. / 调度周期延迟、放置速率、插件评分、抢占与等待原因。").
		WithRow(dashboard.NewRowBuilder("Cycles / 调度周期")).
		WithPanel(single("Leader", "1 on the server that holds the scheduler lease. / 调度主节点。", unitNone, quarter,
			q(`max(heteroflow_scheduler_leader{`+srvSel+`})`, "leader"))).
		WithPanel(single("Placements / s", "Bound placements per second. / 每秒放置数。", unitOps, quarter,
			q(`sum(rate(heteroflow_scheduler_binds_total{`+srvSel+`}[$__rate_interval]))`, "binds"))).
		WithPanel(single("Unaccounted tasks", "Placed tasks without ledger rows (assigned outside the scheduler). / 账外任务。", unitNone, quarter,
			q(`max(heteroflow_ledger_unaccounted_tasks{`+srvSel+`})`, "unaccounted")).Thresholds(thresholds(1, 1))).
		WithPanel(single("Assignment delivery p95", "Time from storing an assignment to handing it to the agent. / 指派下发延迟。", unitSeconds, quarter,
			q(`histogram_quantile(0.95, sum by (le) (rate(heteroflow_assignment_delivery_seconds_bucket{`+srvSel+`}[$__rate_interval])))`, "p95"))).
		WithPanel(graph("Cycle latency", "One framework cycle (filter, assign, score, reserve), p50 and p99 by result. / 调度周期延迟。", unitSeconds, half,
			q(`histogram_quantile(0.5, sum by (le, result) (rate(heteroflow_scheduling_cycle_duration_seconds_bucket{`+srvSel+`}[$__rate_interval])))`, "p50 {{result}}"),
			q(`histogram_quantile(0.99, sum by (le, result) (rate(heteroflow_scheduling_cycle_duration_seconds_bucket{`+srvSel+`}[$__rate_interval])))`, "p99 {{result}}")).Min(0)).
		WithPanel(graph("Cycles by result", "Scheduling cycles per second, placed or unschedulable. / 各结果的调度周期速率。", unitOps, half,
			q(`sum by (result) (rate(heteroflow_scheduling_attempts_total{`+srvSel+`}[$__rate_interval]))`, "{{result}}"),
			q(`sum(rate(heteroflow_scheduler_binds_total{`+srvSel+`}[$__rate_interval]))`, "bound")).Min(0)).
		WithRow(dashboard.NewRowBuilder("Decisions / 决策")).
		WithPanel(graph("Plugin scores of the chosen node", "Mean raw score (0-100) each score plugin gave the nodes placements went to. / 各评分插件对选中节点的平均评分。", unitNone, half,
			q(`sum by (plugin) (rate(heteroflow_scheduler_plugin_score_sum{`+srvSel+`}[$__rate_interval])) / sum by (plugin) (rate(heteroflow_scheduler_plugin_score_count{`+srvSel+`}[$__rate_interval]))`, "{{plugin}}")).Min(0).Max(100)).
		WithPanel(graph("Why pending", "Unschedulable cycles per second by the reason nodes were refused. / 任务等待原因。", unitOps, half,
			q(`sum by (reason) (rate(heteroflow_scheduler_unschedulable_reasons_total{`+srvSel+`}[$__rate_interval]))`, "{{reason}}")).Min(0)).
		WithPanel(graph("Preemptions and retries", "Tasks preempted or requeued per second. / 抢占与重试速率。", unitOps, half,
			q(`sum(rate(heteroflow_preemptions_total{`+srvSel+`}[$__rate_interval]))`, "preempted"),
			q(`sum(rate(heteroflow_task_retries_total{`+srvSel+`}[$__rate_interval]))`, "retried")).Min(0)).
		WithPanel(graph("Releases by cause", "Placements released from the ledger per second. / 资源释放速率。", unitOps, half,
			q(`sum by (cause) (rate(heteroflow_allocations_released_total{`+srvSel+`}[$__rate_interval]))`, "{{cause}}")).Min(0))
}
