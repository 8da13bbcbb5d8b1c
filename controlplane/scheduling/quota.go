package scheduling

import (
	"fmt"
	"strings"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

// Usage is what a tenant/project holds, in the units quotas count.
type Usage struct {
	Devices        int64 `json:"devices"`
	MemoryMiB      int64 `json:"memory_mib"`
	ComputePercent int64 `json:"compute_percent"`
}

func (u *Usage) addSlice(s model.Slice) {
	u.Devices++
	u.MemoryMiB += s.MemoryMiB
	u.ComputePercent += int64(s.ComputeMilli) / 10
}

// quotaScope says whether q bounds a task of tenant/project on vendor
// ("" = the all-vendor check).
func quotaScope(q *controlplane.Quota, tenant, project, vendor string) bool {
	return q.Tenant == tenant && (q.Project == "" || q.Project == project) && strings.EqualFold(q.Vendor, vendor)
}

// usageFor sums the placements (bound, draining and gang-assumed) that q
// bounds.
func (s *Service) usageForLocked(q *controlplane.Quota) Usage {
	var u Usage
	add := func(tenant, project string, vendors []string, slices []model.Slice) {
		if tenant != q.Tenant || (q.Project != "" && project != q.Project) {
			return
		}
		for i, sl := range slices {
			if q.Vendor == "" || (i < len(vendors) && strings.EqualFold(vendors[i], q.Vendor)) {
				u.addSlice(sl)
			}
		}
	}
	if s.snap != nil {
		for _, p := range s.snap.placed {
			add(p.tenant, p.project, p.vendor, p.slices)
		}
	}
	for _, ms := range s.waiting {
		for _, m := range ms {
			add(m.task.Spec.Tenant, m.task.Spec.Project, m.vendors, m.placement.Slices)
		}
	}
	for _, m := range s.unbound { // placed this tick, bind batch not written yet
		add(m.task.Spec.Tenant, m.task.Spec.Project, m.vendors, m.placement.Slices)
	}
	return u
}

// demand is what a request adds if placed (gold without a partition takes
// whole devices: counted as asked, the ledger corrects it once placed).
func demand(spec *controlplane.TaskSpec) Usage {
	n := int64(spec.DeviceCount)
	return Usage{Devices: n, MemoryMiB: n * int64(spec.MemoryMiB), ComputePercent: n * int64(spec.ComputePercent)}
}

// quotaCheck returns the first quota the task would break on vendor ("" =
// totals), with a reason naming limit and use; ever is true when the task
// alone is over the limit (it can never fit).
func (s *Service) quotaCheckLocked(spec *controlplane.TaskSpec, vendor string) (q *controlplane.Quota, why string, ever bool) {
	d := demand(spec)
	for _, q := range s.quotas {
		if !quotaScope(q, spec.Tenant, spec.Project, vendor) {
			continue
		}
		u := s.usageForLocked(q)
		for _, c := range []struct {
			name       string
			limit, use int64
			add        int64
		}{{"devices", q.Devices, u.Devices, d.Devices}, {"memory_mib", q.MemoryMiB, u.MemoryMiB, d.MemoryMiB},
			{"compute_percent", q.ComputePercent, u.ComputePercent, d.ComputePercent}} {
			if c.limit > 0 && c.use+c.add > c.limit {
				return q, fmt.Sprintf("quota %s: %s %d in use + %d asked > limit %d", quotaName(q), c.name, c.use, c.add, c.limit),
					c.add > c.limit
			}
		}
	}
	return nil, "", false
}

func quotaName(q *controlplane.Quota) string {
	n := "tenant " + q.Tenant
	if q.Project != "" {
		n += " project " + q.Project
	}
	if q.Vendor != "" {
		n += " vendor " + q.Vendor
	}
	return n
}

// quotaChecker adapts the service to plugins.QuotaChecker for the task
// being scheduled (the loop sets s.cur under s.mu).
type quotaChecker struct{ s *Service }

func (c quotaChecker) Fits(_ *model.Request, vendor string) (bool, string) {
	if c.s.cur == nil {
		return true, ""
	}
	q, why, _ := c.s.quotaCheckLocked(&c.s.cur.Spec, vendor)
	return q == nil, why
}
