package httpapi

import (
	"net/http"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
)

// selfMetrics serves the server's own registry at /metrics. Several of its
// series are per tenant (billing usage and budgets, failed task names,
// queue ages), so a caller below operator reads only what /prometheus
// would show it: the series of its tenants, and those without a tenant
// about the nodes dedicated to them (Visibility). Cluster-wide callers and
// scrapers with an operator key read everything.
func (a *API) selfMetrics(reg *prometheus.Registry) http.Handler {
	all := promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, err := a.VisibilityOf(r.Context())
		if err != nil {
			WriteError(w, r, a.log, err)
			return
		}
		if v.All {
			all.ServeHTTP(w, r)
			return
		}
		promhttp.HandlerFor(visibleGatherer{g: reg, v: v}, promhttp.HandlerOpts{}).ServeHTTP(w, r)
	})
}

// visibleGatherer keeps the series v sees; a family left empty is dropped.
type visibleGatherer struct {
	g prometheus.Gatherer
	v Visibility
}

func (g visibleGatherer) Gather() ([]*dto.MetricFamily, error) {
	mfs, err := g.g.Gather()
	out := mfs[:0]
	for _, mf := range mfs {
		kept := mf.Metric[:0]
		for _, m := range mf.Metric {
			if g.v.seesSeries(m.GetLabel()) {
				kept = append(kept, m)
			}
		}
		if len(kept) > 0 {
			mf.Metric = kept
			out = append(out, mf)
		}
	}
	return out, err
}

// seesSeries applies the metrics scope (promapi.Scope) to one series'
// labels: its "tenant" is one of v's tenants, or it has none and its
// "host_name" is one of v's nodes.
func (v Visibility) seesSeries(ls []*dto.LabelPair) bool {
	tenant, host := "", ""
	for _, l := range ls {
		switch l.GetName() {
		case "tenant":
			tenant = l.GetValue()
		case "host_name":
			host = l.GetValue()
		}
	}
	if tenant != "" {
		return slices.Contains(v.Tenants, tenant)
	}
	return host != "" && slices.Contains(v.Nodes, host)
}
