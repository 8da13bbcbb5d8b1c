// Package httpapi is HeteroFlow's REST API: chi routes with huma operations
// under /api/v1, whose OpenAPI 3.1 document (/api/v1/openapi.json) is
// generated from the request/response types in types.go and the handlers'
// input structs. /health and /metrics sit beside it.
//
// Every response carries X-Request-Id and the security headers; every error
// is {"error":{"code","message"}} (errors.go holds the one status table and
// replaces huma.NewError so validation, unknown JSON fields and oversize
// bodies use the same shape). Every mutating request is audited after it
// completes, whatever the outcome, by the auditMutations middleware;
// handlers name the action and target with SetAudit. Audit writes go
// through Auditor, which batches asynchronously and never drops an entry.
//
// # Mounting routes from other subsystems
//
// Metrics ingest/query, the agent API, the scheduler and alerts add their
// routes to the same API so they share authentication, the permission
// table, request IDs, logs, metrics, CORS, size limits and auditing:
//
//	api.Handle(http.MethodPost, "/api/v1/agents/heartbeat",
//		httpapi.Perm(auth.ResNodes, auth.ActWrite).ForAgents(), heartbeatHandler)
//	api.Mount("/prometheus", httpapi.Perm(auth.ResMetrics, auth.ActRead), queryAPI)
//	httpapi.Register(api, huma.Operation{OperationID: "list-alerts", Method: http.MethodGet,
//		Path: httpapi.Prefix + "/alerts"}, httpapi.Perm(auth.ResAlerts, auth.ActRead), listAlerts)
//
// Inside a handler, PrincipalFrom(ctx) is the caller, WriteError writes a
// domain error in the API's shape, and SetAudit names the audit entry.
// Register documents the route in the OpenAPI document; Handle and Mount do
// not. All three add the route to Routes(), which the permission-matrix test
// walks, so a new route without a matrix expectation fails that test.
// ForAgents and ForPeople narrow a permission held by both node agents and
// people (nodes:write) to one of them, so that the declared Access, which
// Routes() and Access.Allows report, is what the check enforces; the
// whole-server access test (controlplane/app) holds every route to it.
// Api.Require(access) is the same permission check as chi middleware for
// routers built elsewhere; Registry() is the Prometheus registry served at
// /metrics for other collectors.
package httpapi
