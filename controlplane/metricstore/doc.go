// Package metricstore is HeteroFlow's metrics backbone: where pushed
// metrics land and where every PromQL consumer reads them.
//
//	agents / collectors / Prometheus ──push──► ingest (remote-write, OTLP)
//	                                              │ storage.AppendableV2
//	             embedded mode                    ▼             remote mode
//	   ┌────────── tsdb.DB (dir, WAL, retention) ─┴─ forward.Forwarder ──remote-write──► Prometheus /
//	   │                                                                                VictoriaMetrics
//	promql.Engine ◄─ query.Embedded                    query.Remote (client_golang) ───►  …/api/v1
//	   │                     ▲ query.Querier ▲                    ▲
//	promapi.API (/prometheus/api/v1)   scheduler, alerts,   promapi.Proxy (/prometheus/api/v1)
//	                                   billing, console
//
// Subpackages:
//
//	query    the one Querier interface (Instant, Range) and its two implementations
//	ingest   HTTP receivers with size/concurrency/byte limits and the error envelope
//	promapi  Prometheus-compatible query API (embedded) and its proxy (remote)
//	forward  remote-write forwarder used as the ingest backend in remote mode
//
// Store ties them together from one Config (Defaults, Validate): in
// embedded mode a Prometheus TSDB under Config.Dir with WAL (snappy),
// compaction (blocks up to retention/10), retention by time and size and an
// out-of-order window, and a PromQL engine with timeout, max samples and a
// concurrency limit (queries.active tracker). In remote mode no local
// state: pushes are forwarded synchronously (see package forward for why)
// and queries go to the external API.
//
// The server's own client_golang registry is self-ingested every
// SelfIngestInterval (job="heteroflow"), so what /metrics shows is also
// queryable with PromQL, in both modes.
//
// Authentication is the server's: it mounts IngestRoutes and QueryRoutes
// behind its API-key middleware.
package metricstore
