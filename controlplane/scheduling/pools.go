package scheduling

import (
	"context"
	"maps"
	"sort"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/scheduler/framework"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

// Node pools dedicated to tenants: a tenant's node selector reserves the
// nodes whose labels match it. The tenant's tasks run only there, and no
// other tenant's task (nor one without a tenant) runs there. NodeReady
// applies the rule, so "why pending" names it.

var (
	reasonDedicated   = framework.NewReason("node dedicated to another tenant")
	reasonOutsidePool = framework.NewReason("node outside the tenant's dedicated pool")
)

// poolTable is the pools in force; gen changes with every change of the
// rules, so shapes memoised under older rules are not reused.
type poolTable struct {
	gen    uint64
	byName map[string]map[string]string // tenant → selector
	names  []string                     // sorted, for a stable owner
}

// owner is the tenant whose pool holds a node with labels ("" none).
func (pt *poolTable) owner(labels map[string]string) string {
	for _, name := range pt.names {
		if controlplane.SelectorMatches(pt.byName[name], labels) {
			return name
		}
	}
	return ""
}

// admits reports whether a request of tenant may use a node with labels.
func (pt *poolTable) admits(tenant string, labels map[string]string) framework.Status {
	if pt == nil || len(pt.byName) == 0 {
		return framework.OK
	}
	if sel, ok := pt.byName[tenant]; ok && tenant != "" {
		if !controlplane.SelectorMatches(sel, labels) {
			return framework.Never(reasonOutsidePool)
		}
		return framework.OK
	}
	if pt.owner(labels) != "" {
		return framework.Never(reasonDedicated)
	}
	return framework.OK
}

// syncPoolsLocked re-reads the tenants' node selectors; a change bumps the
// generation. Stores without tenants have no pools.
func (s *Service) syncPoolsLocked(ctx context.Context) error {
	ts, ok := s.store.(controlplane.TenantStore)
	if !ok {
		return nil
	}
	tenants, err := ts.ListTenants(ctx)
	if err != nil {
		return err
	}
	next := map[string]map[string]string{}
	for _, t := range tenants {
		if len(t.NodeSelector) > 0 {
			next[t.Name] = t.NodeSelector
		}
	}
	cur := s.pools
	if cur != nil && maps.EqualFunc(cur.byName, next, maps.Equal) {
		return nil
	}
	pt := &poolTable{byName: next}
	if cur != nil {
		pt.gen = cur.gen
	}
	if len(next) > 0 {
		pt.gen++
	} else {
		pt.gen = 0 // no pools: shapes stop carrying the tenant
	}
	for name := range next {
		pt.names = append(pt.names, name)
	}
	sort.Strings(pt.names)
	s.pools = pt
	if s.snap != nil {
		s.snap.pools = pt
	}
	clear(s.backoff) // tasks waiting for a pool may fit now
	return nil
}

// poolRequest adds the pool facts to a task's request.
func (s *Service) poolRequest(t *controlplane.Task, r *model.Request) {
	if s.pools != nil && s.pools.gen != 0 {
		r.SetPool(t.Spec.Tenant, s.pools.gen)
	}
}
