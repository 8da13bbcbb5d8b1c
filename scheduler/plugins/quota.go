package plugins

import (
	"context"
	"sync"

	"github.com/heteroflow/heteroflow/scheduler/framework"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

// NameQuota is the multi-tenant quota plugin.
const NameQuota = "Quota"

var (
	reasonQuotaTotal  = framework.NewReason("over the tenant/project quota")
	reasonQuotaVendor = framework.NewReason("over the tenant/project quota for every admitted vendor")
)

// QuotaChecker answers for a request whether its owner stays within quota
// when it is placed: over all vendors together (vendor ""), and per vendor.
// The server implements it over the ledger's usage per tenant and project.
type QuotaChecker interface {
	Fits(req *model.Request, vendor string) (ok bool, why string)
}

// Quota enforces tenant/project quotas (totals, not per card) at placement
// time; admission checks the same limits earlier. The total check refuses
// the request in PreFilter. A vendor whose quota is exhausted is removed
// from the request's admitted models (ExcludeModels, so the shape key and
// the framework's memo stay correct), so no node of that vendor is tried.
// Both refusals are unresolvable by preemption of other tenants.
type Quota struct {
	mu      sync.RWMutex
	checker QuotaChecker
	lastWhy string
}

var _ framework.PreFilterPlugin = (*Quota)(nil)

// NewQuota builds the plugin (no args); it allows everything until SetChecker.
func NewQuota(args framework.Args, _ framework.Handle) (framework.Plugin, error) {
	return &Quota{}, args.Decode(&struct{}{})
}

// Name implements framework.Plugin.
func (*Quota) Name() string { return NameQuota }

// SetChecker connects the usage source.
func (q *Quota) SetChecker(c QuotaChecker) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.checker = c
}

// LastReason is the detailed text of the last refusal ("tenant a: devices
// 4/4"), for "why pending" (framework reasons are constants).
func (q *Quota) LastReason() string {
	q.mu.RLock()
	defer q.mu.RUnlock()
	return q.lastWhy
}

// PreFilter checks the totals, then narrows the admitted vendors.
func (q *Quota) PreFilter(_ context.Context, c *framework.Cycle) framework.Status {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.lastWhy = ""
	if q.checker == nil || c.Req.DeviceCount == 0 {
		return framework.OK
	}
	if ok, why := q.checker.Fits(c.Req, ""); !ok {
		q.lastWhy = why
		return framework.Never(reasonQuotaTotal)
	}
	models := c.Cluster.Models()
	blocked := map[string]bool{}
	admitted := false
	for i, m := range models {
		if !c.ModelAllowed[i] {
			continue
		}
		ok, known := true, false
		if b, seen := blocked[m.Vendor]; seen {
			ok, known = !b, true
		}
		if !known {
			var why string
			ok, why = q.checker.Fits(c.Req, m.Vendor)
			blocked[m.Vendor] = !ok
			if !ok {
				q.lastWhy = why
			}
		}
		if !ok {
			c.ModelAllowed[i] = false
			c.Req.ExcludeModels = appendUnique(c.Req.ExcludeModels, m.Model)
			continue
		}
		admitted = true
	}
	if !admitted {
		return framework.Never(reasonQuotaVendor)
	}
	// The exclusions change the request's shape: re-derive its key.
	if err := c.Req.Normalize(); err != nil {
		return framework.AsError(err)
	}
	return framework.OK
}

func appendUnique(xs []string, x string) []string {
	for _, v := range xs {
		if v == x {
			return xs
		}
	}
	return append(xs, x)
}
