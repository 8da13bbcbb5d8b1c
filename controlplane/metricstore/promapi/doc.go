// Package promapi serves the subset of Prometheus' HTTP API that Grafana's
// Prometheus data source, client_golang's api/prometheus/v1 and
// `promtool query` use, in Prometheus' exact JSON envelope:
//
//	GET|POST /api/v1/query               instant PromQL
//	GET|POST /api/v1/query_range         range PromQL
//	GET|POST /api/v1/series              series by match[]
//	GET|POST /api/v1/labels              label names
//	GET      /api/v1/label/{name}/values label values
//	GET      /api/v1/metadata            metric metadata seen by ingest
//	GET      /api/v1/status/buildinfo    version (Grafana probes it)
//	GET|POST /api/v1/query_exemplars     always empty: exemplars are not stored for query
//
// The server mounts Routes under /prometheus, so Grafana's data source URL
// is http://server:3333/prometheus.
//
// Why not Prometheus' own web/api/v1: it costs ~17.5 MB of binary, 28 more
// modules and a 40-argument constructor full of stub retrievers (targets,
// alerts, rules, TSDB admin) that make no sense here. The endpoints above are
// thin over promql.Engine and storage.Queryable; their parameter parsing and
// error types follow Prometheus' documented API.
//
// In remote mode NewProxy serves the same paths by forwarding to the
// external store's /api/v1, adding its credentials, so Grafana keeps one URL.
package promapi
