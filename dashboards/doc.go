// Package dashboards holds HeteroFlow's Grafana dashboards as code, built
// with the Grafana Foundation SDK (Apache-2.0; Grafana's own AGPL modules
// are never imported). The DCGM-exporter-compatible series they can also
// be read through are recorded by alerts/rules/dcgm.yml.
//
// The generated dashboards live in json/ and are committed, so that
// deploy/grafana provisions them and users can import them into Grafana
// 10, 11 or 12 without a Go toolchain. TestGeneratedJSONIsCurrent fails
// when the committed files differ from what the code generates; refresh
// them with
//
//	go generate ./dashboards
//
// Every dashboard has the variables datasource, cluster, vendor, model,
// node and tenant. Label selectors use regex matchers whose "All" value is
// ".*", which also matches series without the label (a single-cluster
// install has no cluster label), so a variable without matching series
// narrows panels to "no data", never to a query error.
//
// Series the panels read:
//
//	hw_gpu_*, hw_status            vendor receivers on each node (OpenTelemetry hw.* names)
//	system_*                       host_metrics on each node
//	heteroflow_*, go_*, process_*  the server's own registry, self-ingested (job="heteroflow")
//	heteroflow_agent_*             each agent's own metrics (job="heteroflow-agent")
//	ALERTS                         the alert rule engine
package dashboards

//go:generate go run ./cmd/gendashboards -out json
