// Package alertapi is the alert engine's HTTP layer: REST routes under
// /api/v1 (alerts, rules, parameters, silences, channels, notifications,
// statistics; every one in the OpenAPI document, guarded by the RBAC
// table's alerts permissions and audited like the rest of the API) and
// Prometheus' GET /api/v1/rules and /api/v1/alerts under /prometheus, so
// Grafana's alert list and other Prometheus clients see our rules.
package alertapi
