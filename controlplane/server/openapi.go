package server

import (
	"encoding/json"
	"net/http"

	"github.com/heteroflow/heteroflow/controlplane/httpapi"
)

// promEnvelope is the Prometheus HTTP API's answer; data depends on the
// endpoint (see the Prometheus HTTP API documentation).
type promEnvelope struct {
	Status    string          `json:"status" enum:"success,error"`
	Data      json.RawMessage `json:"data,omitempty"`
	ErrorType string          `json:"errorType,omitempty"`
	Error     string          `json:"error,omitempty"`
	Warnings  []string        `json:"warnings,omitempty"`
	Infos     []string        `json:"infos,omitempty"`
}

// documentMetrics puts the ingest endpoints and the Prometheus-compatible
// query API in the OpenAPI document.
func (s *Server) documentMetrics() {
	ingest := []string{"metrics ingest"}
	s.api.Document(http.MethodPost, httpapi.Prefix+"/write", httpapi.Doc{ID: "remote-write", Summary: "Prometheus remote-write 1.0 (snappy-compressed protobuf WriteRequest)",
		Tags: ingest, RequestType: "application/x-protobuf", Status: http.StatusNoContent, Errors: []int{413, 415, 429, 503}})
	s.api.Document(http.MethodPost, httpapi.Prefix+"/otlp/v1/metrics", httpapi.Doc{ID: "otlp-metrics", Summary: "OTLP/HTTP metrics export (protobuf or JSON)",
		Tags: ingest, RequestType: "application/x-protobuf", Status: http.StatusOK, Errors: []int{413, 415, 429, 503}})

	query := []string{"prometheus query API"}
	mount := func(method, path, id, summary string, params ...string) {
		s.api.Document(method, "/prometheus"+path, httpapi.Doc{ID: id, Summary: summary, Tags: query, Query: params, Response: promEnvelope{}, Errors: []int{422, 503}})
	}
	for _, m := range []string{http.MethodGet, http.MethodPost} {
		suffix := map[string]string{http.MethodGet: "", http.MethodPost: "-post"}[m]
		mount(m, "/api/v1/query", "prom-query"+suffix, "PromQL instant query", "query", "time", "timeout")
		mount(m, "/api/v1/query_range", "prom-query-range"+suffix, "PromQL range query", "query", "start", "end", "step", "timeout")
		mount(m, "/api/v1/series", "prom-series"+suffix, "Series matching selectors", "match[]", "start", "end", "limit")
		mount(m, "/api/v1/labels", "prom-labels"+suffix, "Label names", "match[]", "start", "end", "limit")
		mount(m, "/api/v1/query_exemplars", "prom-exemplars"+suffix, "Exemplars (always empty)", "query", "start", "end")
	}
	mount(http.MethodGet, "/api/v1/label/{name}/values", "prom-label-values", "Values of a label", "match[]", "start", "end", "limit")
	mount(http.MethodGet, "/api/v1/metadata", "prom-metadata", "Metric metadata", "metric", "limit")
	mount(http.MethodGet, "/api/v1/status/buildinfo", "prom-buildinfo", "Build information")
}
