package httpapi

import (
	"context"
	"fmt"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/auth"
)

// Visibility is what a caller sees of data that spans tenants (alerts,
// metrics): everything for cluster-wide roles; otherwise the data of its
// tenants, plus platform-wide data (no tenant) about the nodes of the pools
// dedicated to those tenants. A caller in no tenant sees nothing of it.
type Visibility struct {
	All     bool
	Tenants []string
	Nodes   []string
}

// AlertScope is v as an alert filter's scope (nil: everything).
func (v Visibility) AlertScope() *controlplane.AlertScope {
	if v.All {
		return nil
	}
	return &controlplane.AlertScope{Tenants: v.Tenants, Nodes: v.Nodes}
}

// VisibilityOf is the visibility of the request's caller. It reads the
// caller's tenants (loaded for this request) and, for those with a
// dedicated pool, the nodes whose labels match the pool's selector now.
func (a *API) VisibilityOf(ctx context.Context) (Visibility, error) {
	p := PrincipalFrom(ctx)
	if p == nil {
		return Visibility{}, nil
	}
	if p.ClusterWide() {
		return Visibility{All: true}, nil
	}
	v := Visibility{Tenants: p.TenantNames()}
	sels, err := a.dedicatedSelectors(ctx, p)
	if err != nil || len(sels) == 0 {
		return v, err
	}
	ns, ok := a.store.(controlplane.NodeStore)
	if !ok {
		return v, nil
	}
	for off := 0; ; off += controlplane.MaxPageLimit {
		nodes, total, err := ns.ListNodes(ctx, controlplane.NodeFilter{Page: controlplane.Page{Limit: controlplane.MaxPageLimit, Offset: off}})
		if err != nil {
			return v, fmt.Errorf("list nodes: %w", err)
		}
		for _, n := range nodes {
			for _, sel := range sels {
				if controlplane.SelectorMatches(sel, n.Labels) {
					v.Nodes = append(v.Nodes, n.ID)
					break
				}
			}
		}
		if off+len(nodes) >= total || len(nodes) == 0 {
			return v, nil
		}
	}
}

// dedicatedSelectors are the node selectors of p's tenants that dedicate a pool.
func (a *API) dedicatedSelectors(ctx context.Context, p *auth.Principal) ([]map[string]string, error) {
	ts := a.tenantStore()
	if ts == nil {
		return nil, nil
	}
	var out []map[string]string
	for _, name := range p.TenantNames() {
		t, err := ts.GetTenant(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("load tenant %s: %w", name, err)
		}
		if len(t.NodeSelector) > 0 {
			out = append(out, t.NodeSelector)
		}
	}
	return out, nil
}
