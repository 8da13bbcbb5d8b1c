package alertapi

import (
	"context"
	"slices"

	"github.com/prometheus/prometheus/promql/parser"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/httpapi"
	"github.com/heteroflow/heteroflow/controlplane/metricstore/promapi"
)

// What a caller below operator sees of alerts (httpapi.Visibility): the
// alerts, rules, silences and channels of its tenants, and platform-wide
// alerts about the nodes dedicated to them. Cluster admins and operators
// see everything.

// labelsVisible reports whether an alert with these labels is visible.
func labelsVisible(v httpapi.Visibility, lbl map[string]string) bool {
	if v.All {
		return true
	}
	a := &controlplane.AlertInstance{Tenant: lbl["tenant"]}
	for _, k := range []string{"host_name", "hostname", "node"} {
		if n := lbl[k]; n != "" {
			a.Node = n
			break
		}
	}
	return v.AlertScope().Sees(a)
}

// tenantVisible reports whether a rule, silence or channel owned by
// tenant ("" = platform-wide) is visible.
func tenantVisible(v httpapi.Visibility, tenant string) bool {
	return v.All || (tenant != "" && slices.Contains(v.Tenants, tenant))
}

// tenantFilter checks an explicit ?tenant= against the caller's tenants.
func tenantFilter(v httpapi.Visibility, tenant string) error {
	if tenant != "" && !v.All && !slices.Contains(v.Tenants, tenant) {
		return httpapi.TenantForbidden(tenant)
	}
	return nil
}

// scopedExpr narrows a rule expression tested by a caller below operator
// to the series it may read (promapi.Scope), so testing a rule reveals no
// more than querying.
func scopedExpr(v httpapi.Visibility, expr string) (string, error) {
	if v.All {
		return expr, nil
	}
	sc := promapi.Scope{Tenants: v.Tenants, Nodes: v.Nodes}
	out, err := sc.Query(exprParser, expr)
	if err != nil {
		return "", controlplane.InvalidCode("alert_rule_invalid_promql", []string{"detail", err.Error()}, "expr: %v", err)
	}
	return out, nil
}

func (h *Handlers) visibility(ctx context.Context) (httpapi.Visibility, error) {
	if h.visible == nil {
		return httpapi.Visibility{All: true}, nil
	}
	return h.visible(ctx)
}

var exprParser = parser.NewParser(parser.Options{})
