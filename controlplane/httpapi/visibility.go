package httpapi

import (
	"context"
	"fmt"
	"sync"
	"time"

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
// dedicated pool, the nodes whose labels match the pool's selector (as
// listed at most poolNodesTTL ago).
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
	v.Nodes, err = a.pools.nodes(ctx, a.store, a.now(), sels)
	return v, err
}

// poolNodesTTL bounds how long a pool's node list is reused: the console
// sends a burst of queries per page, each would otherwise list the fleet.
// A node that joins or leaves a pool shows in metrics within it.
const poolNodesTTL = 5 * time.Second

// poolCache keeps the nodes matching each set of pool selectors briefly.
type poolCache struct {
	mu sync.Mutex
	m  map[string]poolEntry
}

type poolEntry struct {
	nodes []string
	at    time.Time
}

func (c *poolCache) nodes(ctx context.Context, store controlplane.Store, now time.Time, sels []map[string]string) ([]string, error) {
	key := fmt.Sprint(sels) // fmt prints maps sorted by key
	c.mu.Lock()
	e, ok := c.m[key]
	c.mu.Unlock()
	if ok && now.Sub(e.at) < poolNodesTTL {
		return e.nodes, nil
	}
	ns, ok := store.(controlplane.NodeStore)
	if !ok {
		return nil, nil
	}
	var out []string
	for off := 0; ; off += controlplane.MaxPageLimit {
		nodes, total, err := ns.ListNodes(ctx, controlplane.NodeFilter{Page: controlplane.Page{Limit: controlplane.MaxPageLimit, Offset: off}})
		if err != nil {
			return nil, fmt.Errorf("list nodes: %w", err)
		}
		for _, n := range nodes {
			for _, sel := range sels {
				if controlplane.SelectorMatches(sel, n.Labels) {
					out = append(out, n.ID)
					break
				}
			}
		}
		if off+len(nodes) >= total || len(nodes) == 0 {
			break
		}
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) > 1024 {
		c.m = map[string]poolEntry{} // bounded: one entry per distinct set of pools
	}
	c.m[key] = poolEntry{nodes: out, at: now}
	c.mu.Unlock()
	return out, nil
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
