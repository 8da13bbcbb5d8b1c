package httpapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/heteroflow/heteroflow/controlplane/auth"
)

// LinksJSON are the external tools the console links to; empty when not
// configured (the console then shows no link).
type LinksJSON struct {
	GrafanaURL string `json:"grafana_url" doc:"Grafana with the HeteroFlow dashboards (server config grafana_url / HETEROFLOW_GRAFANA_URL); empty when not configured"`
}

// registerLinks serves the configured external links to every role that
// may read metrics (the Grafana dashboards are views of those metrics).
func (a *API) registerLinks() {
	Register(a, huma.Operation{OperationID: "get-links", Method: http.MethodGet, Path: Prefix + "/settings/links",
		Summary: "External tools the console links to (Grafana)", Tags: []string{"settings"}},
		Perm(auth.ResMetrics, auth.ActRead), a.getLinks)
}

func (a *API) getLinks(context.Context, *struct{}) (*Body[LinksJSON], error) {
	return &Body[LinksJSON]{Body: LinksJSON{GrafanaURL: a.opts.GrafanaURL}}, nil
}
