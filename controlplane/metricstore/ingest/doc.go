// Package ingest receives metrics pushed to the server and appends them to a
// storage.AppendableV2: the embedded TSDB, or in remote mode the forwarder
// that remote-writes to an external store.
//
// Protocols, each decoded by Prometheus' own handlers so behaviour (label
// validation, OTLP→Prometheus name translation, out-of-order and duplicate
// handling) is exactly Prometheus':
//
//	POST /api/v1/write              remote-write 1.0 (snappy protobuf; 2.0 too)
//	POST /api/v1/otlp/v1/metrics    OTLP/HTTP metrics, protobuf or JSON, optional gzip
//
// In front of both sits a guard that never lets a push hurt the server:
//
//	body larger than Limits.MaxBodyBytes             → 413 payload_too_large
//	more than MaxInflightRequests concurrent pushes,
//	or more than MaxInflightBytes of bodies in memory → 429 too_many_requests + Retry-After
//	undecodable payload, bad content type,
//	out-of-order / duplicate / too-old samples         → 400 invalid_argument with the reason
//	backend (remote store) down                        → 503 unavailable + Retry-After
//
// A request is applied atomically: Prometheus' handlers roll the whole
// appender back on any sample error, so a 4xx/5xx means nothing from that
// request was stored and the sender may retry it whole. Error bodies use the
// REST contract's envelope {"error":{"code","message"}}.
//
// One exception inherited from Prometheus is documented rather than hidden:
// remote-write 1.0 series without a metric name or with invalid UTF-8 labels
// are skipped (the rest of the request is stored), logged at warn level and
// counted in prometheus_api_remote_write_invalid_labels_samples_total.
//
// The instrumented appendable also records each metric family's metadata
// (type, unit, help) seen in OTLP pushes into a MetadataStore, which the
// query API serves at /api/v1/metadata.
package ingest
