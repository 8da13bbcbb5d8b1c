// Package forward is the ingest backend of remote mode: a
// storage.AppendableV2 that sends every committed transaction to an external
// Prometheus-compatible store by remote-write 1.0 (Prometheus with
// --web.enable-remote-write-receiver, VictoriaMetrics' /api/v1/write, Mimir,
// Thanos receive, …).
//
// Design choice: forwarding is synchronous, one outgoing remote-write per
// incoming push, sent at Commit. The alternative — Prometheus' own
// remote.WriteStorage tailing a local TSDB's WAL — gives durable buffering
// but needs a local TSDB (disk, retention, compaction) on every server even
// though the operator chose an external store precisely to avoid that, and it
// acknowledges pushes before the external store has them. Synchronous
// forwarding keeps the server stateless for metrics and makes the answer to
// the agent truthful: 204 means the external store accepted the samples; a
// store that is down or throttling becomes 503 + Retry-After (ErrUnavailable)
// after a few quick retries, so the agent's collector keeps the batch in its
// own sending queue and retries; a store that rejects the data (4xx) becomes
// 400 (ErrRejected) with the store's reason. Nothing is acknowledged and then
// lost. The cost is that push latency includes the store's latency.
//
// The same appendable receives the server's self-ingested metrics, so in
// remote mode /metrics also lands in the external store.
package forward
