// Package querytest is the consumer conformance suite: the PromQL the
// scheduler, alerts and billing rely on, run unchanged against every
// query.Querier (embedded, remote Prometheus, remote VictoriaMetrics).
package querytest
