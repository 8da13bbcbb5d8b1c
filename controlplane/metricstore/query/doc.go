// Package query is the one Go interface for PromQL that every consumer of
// metrics uses: the scheduler's LoadAware plugin, the alert engine, billing
// and the console's metrics explorer.
//
// Two implementations satisfy Querier:
//
//	Embedded  promql.Engine over a storage.Queryable (the server's own TSDB)
//	Remote    any Prometheus-compatible HTTP API (Prometheus, VictoriaMetrics,
//	          Thanos, Mimir) through client_golang's api/prometheus/v1, with
//	          basic or bearer authentication
//
// Results are prometheus/common/model values (model.Vector, model.Matrix) so
// that consumers never import the promql engine and both implementations
// return exactly the same shapes. Failures are classified into the sentinels
// ErrInvalidQuery (the caller's expression is wrong: do not retry),
// ErrTimeout and ErrUnavailable (the store is slow or down: retry later), so a
// consumer can decide without parsing messages.
//
// An instant query whose result is a scalar is returned as a one-sample vector
// with no labels; a string or range-vector result is ErrInvalidQuery because
// no consumer can use it.
package query
