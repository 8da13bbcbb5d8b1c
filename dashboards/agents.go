package dashboards

import "github.com/grafana/grafana-foundation-sdk/go/dashboard"

// agentsBoard: are the node agents and their collectors alive and keeping up.
func agentsBoard() *dashboard.DashboardBuilder {
	return newBoard("heteroflow-agents", "HeteroFlow · Agents and collectors / 节点代理与采集",
		"Agent liveness, heartbeats, metric ingestion and how fresh each node's device series are. / 节点代理存活、心跳、指标写入与数据新鲜度。").
		WithRow(dashboard.NewRowBuilder("Agents / 代理")).
		WithPanel(single("Agents online", "Nodes whose agent is heard from. / 在线代理。", unitNone, quarter,
			q(`sum(heteroflow_node_up{`+nodeSel+`})`, "online"))).
		WithPanel(single("Agents offline", "Nodes silent past the offline threshold. / 离线代理。", unitNone, quarter,
			q(`count(heteroflow_node_up{`+nodeSel+`} == 0) or vector(0)`, "offline")).Thresholds(thresholds(1, 1))).
		WithPanel(single("Heartbeats / s", "Heartbeats the server receives. / 每秒心跳数。", unitOps, quarter,
			q(`sum(rate(heteroflow_agent_heartbeats_total{`+srvSel+`}[$__rate_interval]))`, "heartbeats"))).
		WithPanel(single("Samples ingested / s", "Samples written through remote-write and OTLP. / 每秒写入样本数。", unitOps, quarter,
			q(`sum(rate(heteroflow_ingest_samples_total{`+srvSel+`}[$__rate_interval]))`, "samples"))).
		WithPanel(graph("Agent up by node", "1 while heard from, 0 after the offline silence. / 各节点代理状态。", unitNone, half,
			q(`max by (node) (heteroflow_node_up{`+nodeSel+`})`, "{{node}}")).Min(0).Max(1)).
		WithPanel(graph("Series age by node", "Seconds since each node's newest device sample (a stuck collector grows it). / 各节点最新设备数据的延迟。", unitSeconds, half,
			q(`time() - max by (host_name) (timestamp(hw_gpu_utilization_ratio{`+gpuSel+`}) or timestamp(hw_gpu_memory_limit_bytes{`+gpuSel+`}))`, "{{host_name}}")).Min(0)).
		WithPanel(graph("Ingest requests", "Write requests per second by protocol and status code. / 写入请求速率。", unitReqs, half,
			q(`sum by (protocol, code) (rate(heteroflow_ingest_requests_total{`+srvSel+`}[$__rate_interval]))`, "{{protocol}} {{code}}")).Min(0)).
		WithPanel(graph("Status reports", "Task status entries from agent outboxes per second (applied, duplicate). / 任务状态上报速率。", unitOps, half,
			q(`sum by (outcome) (rate(heteroflow_agent_status_updates_total{`+srvSel+`}[$__rate_interval]))`, "{{outcome}}")).Min(0)).
		WithPanel(graph("Devices reported by node", "Devices each node's collector reports, by vendor. / 各节点上报设备数。", unitNone, full,
			q(`count by (host_name, hw_vendor) (max by (host_name, hw_vendor, hw_id) ({`+deviceSeries+`, `+gpuSel+`}))`, "{{host_name}} {{hw_vendor}}")).Min(0)).
		// The agents' own series (VictoriaMetrics/metrics in the agent,
		// pushed with each heartbeat as job="heteroflow-agent").
		WithRow(dashboard.NewRowBuilder("Agent processes / 代理进程")).
		WithPanel(graph("Heartbeats sent", "Heartbeats each agent sent per second, ok or failed. / 各代理发送心跳速率。", unitOps, third,
			q(`sum by (node, result) (rate(heteroflow_agent_heartbeats_sent_total{`+agentSel+`}[$__rate_interval]))`, "{{node}} {{result}}")).Min(0)).
		WithPanel(graph("Tasks running", "Tasks each agent runs now. / 各代理运行中的任务。", unitNone, third,
			q(`sum by (node) (heteroflow_agent_tasks_running{`+agentSel+`})`, "{{node}}")).Min(0)).
		WithPanel(graph("Outbox backlog", "Task status updates waiting to reach the server. / 待上报的任务状态。", unitNone, third,
			q(`sum by (node) (heteroflow_agent_outbox_pending{`+agentSel+`})`, "{{node}}")).Min(0)).
		WithPanel(graph("Tasks ended on the agents", "Tasks ending per second by phase, as the agents saw them. / 代理侧任务结束速率。", unitOps, third,
			q(`sum by (phase) (rate(heteroflow_agent_tasks_finished_total{`+agentSel+`}[$__rate_interval]))`, "{{phase}}")).Min(0)).
		WithPanel(graph("Agent memory", "Resident memory of each agent process. / 代理进程内存。", unitBytes, third,
			q(`max by (node) (process_resident_memory_bytes{`+agentSel+`})`, "{{node}}")).Min(0)).
		WithPanel(graph("Agent CPU", "CPU seconds per second each agent process uses. / 代理进程 CPU。", unitNone, third,
			q(`sum by (node) (rate(process_cpu_seconds_total{`+agentSel+`}[$__rate_interval]))`, "{{node}}")).Min(0))
}
