package dashboards

import "github.com/grafana/grafana-foundation-sdk/go/dashboard"

// serverBoard: the control plane's own health (its registry, self-ingested).
func serverBoard() *dashboard.DashboardBuilder {
	return newBoard("heteroflow-server", "HeteroFlow · Server / 服务器",
		"API traffic and latency, the Go runtime, the metrics store and its query engine. / API 流量与延迟、运行时、指标存储与查询引擎。").
		WithRow(dashboard.NewRowBuilder("API")).
		WithPanel(graph("Requests by route", "API requests per second by route. / 各路由请求速率。", unitReqs, half,
			q(`sum by (route) (rate(heteroflow_http_requests_total{`+srvSel+`}[$__rate_interval]))`, "{{route}}")).Min(0)).
		WithPanel(graph("Latency p95 by route", "95th percentile request latency by route. / 各路由 p95 延迟。", unitSeconds, half,
			q(`histogram_quantile(0.95, sum by (le, route) (rate(heteroflow_http_request_duration_seconds_bucket{`+srvSel+`}[$__rate_interval])))`, "{{route}}")).Min(0)).
		WithPanel(graph("Responses by status code", "Responses per second by status code. / 各状态码响应速率。", unitReqs, half,
			q(`sum by (code) (rate(heteroflow_http_requests_total{`+srvSel+`}[$__rate_interval]))`, "{{code}}")).Min(0)).
		WithPanel(graph("Server error ratio", "5xx responses over all responses. / 5xx 错误率。", unitRatio, half,
			q(`(sum(rate(heteroflow_http_requests_total{`+srvSel+`, code=~"5.."}[$__rate_interval])) or vector(0)) / sum(rate(heteroflow_http_requests_total{`+srvSel+`}[$__rate_interval]))`, "5xx")).Min(0)).
		WithRow(dashboard.NewRowBuilder("Process / 进程")).
		WithPanel(graph("CPU", "CPU seconds per second the server uses. / 服务器 CPU。", unitNone, third,
			q(`rate(process_cpu_seconds_total{`+srvSel+`}[$__rate_interval])`, "{{instance}}")).Min(0)).
		WithPanel(graph("Memory", "Resident memory and Go heap in use. / 常驻内存与堆。", unitBytes, third,
			q(`process_resident_memory_bytes{`+srvSel+`}`, "rss {{instance}}"),
			q(`go_memstats_heap_inuse_bytes{`+srvSel+`}`, "heap {{instance}}")).Min(0)).
		WithPanel(graph("Goroutines", "Live goroutines. / 协程数。", unitNone, third,
			q(`go_goroutines{`+srvSel+`}`, "{{instance}}")).Min(0)).
		WithRow(dashboard.NewRowBuilder("Metrics store / 指标存储")).
		WithPanel(graph("Head series", "Series in the TSDB head block. / TSDB 活跃序列。", unitNone, third,
			q(`prometheus_tsdb_head_series{`+srvSel+`}`, "{{instance}}")).Min(0)).
		WithPanel(graph("Samples appended / s", "Samples the TSDB appends per second. / 每秒写入样本。", unitOps, third,
			q(`rate(prometheus_tsdb_head_samples_appended_total{`+srvSel+`}[$__rate_interval])`, "{{instance}} {{type}}")).Min(0)).
		WithPanel(graph("Query time p90", "PromQL evaluation time, 90th percentile by phase. / 查询耗时 p90。", unitSeconds, third,
			q(`max by (slice) (prometheus_engine_query_duration_seconds{`+srvSel+`, quantile="0.9"})`, "{{slice}}")).Min(0)).
		WithPanel(graph("Ingest commit failures", "Write batches the TSDB refused per second. / 写入提交失败。", unitOps, half,
			q(`sum(rate(heteroflow_ingest_commit_failures_total{`+srvSel+`}[$__rate_interval]))`, "failures")).Min(0)).
		WithPanel(graph("Storage size", "Bytes of persisted blocks and WAL. / 存储占用。", unitBytes, half,
			q(`prometheus_tsdb_storage_blocks_bytes{`+srvSel+`}`, "blocks {{instance}}"),
			q(`prometheus_tsdb_wal_storage_size_bytes{`+srvSel+`}`, "wal {{instance}}")).Min(0))
}
