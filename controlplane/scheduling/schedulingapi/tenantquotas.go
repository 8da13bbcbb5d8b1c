package schedulingapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/danielgtaylor/huma/v2"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/auth"
	"github.com/heteroflow/heteroflow/controlplane/httpapi"
	"github.com/heteroflow/heteroflow/controlplane/scheduling"
)

// A tenant's quotas under /tenants/{tenant}/quotas: its members read them
// with their live use; cluster admins change any of them, the tenant's
// admins change its projects' quotas, each limit no larger than the
// tenant's own quota for the same vendor (or all vendors). The console's
// Quotas page reads and writes through these routes.

// Stable codes of the quota refusals; the console translates them.
const (
	CodeQuotaTenantLevel    = "quota_tenant_level"
	CodeQuotaExceedsTenant  = "quota_exceeds_tenant"
	CodeQuotaNotFound       = "quota_not_found"
	CodeQuotaProjectMissing = "quota_project_not_found"
)

type tenantIn struct {
	Tenant string `path:"tenant" maxLength:"128"`
}

// quotaBody is a quota of the path's tenant as a client writes it.
type quotaBody struct {
	Project        string `json:"project,omitempty" maxLength:"128" doc:"A project of the tenant; empty = the tenant's own quota (cluster admins only)"`
	Vendor         string `json:"vendor,omitempty" maxLength:"64" doc:"Bounds this vendor's devices; empty = all vendors together"`
	Devices        int64  `json:"devices,omitempty" doc:"Devices held at once (0 = unlimited)"`
	MemoryMiB      int64  `json:"memory_mib,omitempty" doc:"Device memory held at once, MiB (0 = unlimited)"`
	ComputePercent int64  `json:"compute_percent,omitempty" doc:"Σ compute % held at once, a whole device = 100 (0 = unlimited)"`
	Policy         string `json:"policy,omitempty" doc:"queue (wait until usage drops, default) or refuse (fail at once)"`
}

func (b quotaBody) view(tenant string) scheduling.QuotaView {
	return scheduling.QuotaView{Tenant: tenant, Project: b.Project, Vendor: b.Vendor, Devices: b.Devices, MemoryMiB: b.MemoryMiB,
		ComputePercent: b.ComputePercent, Policy: b.Policy}
}

type createTenantQuotaIn struct {
	Tenant string `path:"tenant" maxLength:"128"`
	Body   quotaBody
}

type tenantQuotaIn struct {
	Tenant string `path:"tenant" maxLength:"128"`
	ID     int64  `path:"id" minimum:"1"`
}

type putTenantQuotaIn struct {
	Tenant string `path:"tenant" maxLength:"128"`
	ID     int64  `path:"id" minimum:"1"`
	Body   quotaBody
}

func mountTenantQuotas(api *httpapi.API, h *handlers) {
	p := httpapi.Prefix + "/tenants/{tenant}/quotas"
	tags := []string{"quotas"}
	read := httpapi.Perm(auth.ResQuotas, auth.ActRead).InTenant(httpapi.TenantMembers)
	write := httpapi.Perm(auth.ResQuotas, auth.ActWrite).ForPeople().InTenant(httpapi.TenantAdmins)
	del := httpapi.Perm(auth.ResQuotas, auth.ActDelete).ForPeople().InTenant(httpapi.TenantAdmins)
	httpapi.Register(api, huma.Operation{OperationID: "list-tenant-quotas", Method: http.MethodGet, Path: p, Tags: tags,
		Summary: "A tenant's quotas (its own and its projects') with their live use"}, read, h.listTenantQuotas)
	httpapi.Register(api, huma.Operation{OperationID: "create-tenant-quota", Method: http.MethodPost, Path: p, Tags: tags, DefaultStatus: http.StatusCreated,
		Summary: "Create a quota of the tenant (tenant admins: a project's, within the tenant's quota)"}, write, h.createTenantQuota)
	httpapi.Register(api, huma.Operation{OperationID: "put-tenant-quota", Method: http.MethodPut, Path: p + "/{id}", Tags: tags,
		Summary: "Replace a quota of the tenant (tenant admins: a project's, within the tenant's quota)"}, write, h.putTenantQuota)
	httpapi.Register(api, huma.Operation{OperationID: "delete-tenant-quota", Method: http.MethodDelete, Path: p + "/{id}", Tags: tags, DefaultStatus: http.StatusNoContent,
		Summary: "Delete a quota of the tenant (tenant admins: a project's)"}, del, h.deleteTenantQuota)
}

func (h *handlers) listTenantQuotas(ctx context.Context, in *tenantIn) (*httpapi.Body[scheduling.QuotaList], error) {
	if err := h.tenantExists(ctx, in.Tenant); err != nil {
		return nil, err
	}
	all, err := h.s.Quotas(ctx)
	if err != nil {
		return nil, err
	}
	out := scheduling.QuotaList{Items: []scheduling.QuotaView{}}
	for _, q := range all.Items {
		if q.Tenant == in.Tenant {
			out.Items = append(out.Items, q)
		}
	}
	out.Total = len(out.Items)
	return &httpapi.Body[scheduling.QuotaList]{Body: out}, nil
}

func (h *handlers) createTenantQuota(ctx context.Context, in *createTenantQuotaIn) (*httpapi.Body[scheduling.QuotaView], error) {
	httpapi.SetAudit(ctx, "quota.create", "tenant/"+in.Tenant)
	if err := h.tenantExists(ctx, in.Tenant); err != nil {
		return nil, err
	}
	q := in.Body.view(in.Tenant)
	if err := h.withinTenant(ctx, q); err != nil {
		return nil, err
	}
	out, err := h.s.CreateQuota(ctx, q)
	if err != nil {
		return nil, err
	}
	httpapi.SetAudit(ctx, "quota.create", "quota/"+strconv.FormatInt(out.ID, 10))
	httpapi.SetAuditDetail(ctx, quotaDetail(out))
	return &httpapi.Body[scheduling.QuotaView]{Body: out}, nil
}

func (h *handlers) putTenantQuota(ctx context.Context, in *putTenantQuotaIn) (*httpapi.Body[scheduling.QuotaView], error) {
	httpapi.SetAudit(ctx, "quota.update", "quota/"+strconv.FormatInt(in.ID, 10))
	if _, err := h.tenantQuota(ctx, in.Tenant, in.ID); err != nil {
		return nil, err
	}
	q := in.Body.view(in.Tenant)
	if err := h.withinTenant(ctx, q); err != nil {
		return nil, err
	}
	out, err := h.s.UpdateQuota(ctx, in.ID, q)
	if err != nil {
		return nil, err
	}
	httpapi.SetAuditDetail(ctx, quotaDetail(out))
	return &httpapi.Body[scheduling.QuotaView]{Body: out}, nil
}

func (h *handlers) deleteTenantQuota(ctx context.Context, in *tenantQuotaIn) (*struct{}, error) {
	httpapi.SetAudit(ctx, "quota.delete", "quota/"+strconv.FormatInt(in.ID, 10))
	if _, err := h.tenantQuota(ctx, in.Tenant, in.ID); err != nil {
		return nil, err
	}
	return nil, h.s.DeleteQuota(ctx, in.ID)
}

// tenantExists refuses a path naming no tenant (the coded 404 of the
// tenants API), so no quota is stored for a tenant that does not exist.
func (h *handlers) tenantExists(ctx context.Context, tenant string) error {
	return h.tenantMissing(ctx, tenant, http.StatusNotFound)
}

// tenantMissing is the coded tenant_not_found answer, with status, when
// tenant does not exist (nil where the store keeps no tenants).
func (h *handlers) tenantMissing(ctx context.Context, tenant string, status int) error {
	ts, ok := h.store.(controlplane.TenantStore)
	if !ok {
		return nil
	}
	if _, err := ts.GetTenant(ctx, tenant); errors.Is(err, controlplane.ErrNotFound) {
		return httpapi.CodedError(status, httpapi.CodeTenantNotFound, fmt.Sprintf("tenant %q does not exist", tenant))
	} else if err != nil {
		return err
	}
	return nil
}

// quotaTargetExists refuses a quota (from either quota API, for every
// caller) whose tenant or project does not exist: it would bound nothing,
// since a task names only existing ones.
func (h *handlers) quotaTargetExists(ctx context.Context, q scheduling.QuotaView) error {
	ts, ok := h.store.(controlplane.TenantStore)
	if !ok || q.Tenant == "" {
		return nil
	}
	if err := h.tenantMissing(ctx, q.Tenant, http.StatusBadRequest); err != nil {
		return err
	}
	if q.Project != "" {
		if _, err := ts.GetProject(ctx, q.Tenant, q.Project); errors.Is(err, controlplane.ErrNotFound) {
			return controlplane.InvalidCode(CodeQuotaProjectMissing, []string{"tenant", q.Tenant, "project", q.Project},
				"tenant %q has no project %q", q.Tenant, q.Project)
		} else if err != nil {
			return err
		}
	}
	return nil
}

func quotaDetail(q scheduling.QuotaView) string {
	return fmt.Sprintf("tenant=%s project=%s vendor=%s devices=%d memory_mib=%d compute_percent=%d policy=%s",
		q.Tenant, q.Project, q.Vendor, q.Devices, q.MemoryMiB, q.ComputePercent, q.Policy)
}

// clusterQuotaAdmin reports whether the caller changes any quota (the
// permission itself, held by cluster admins), not only as a tenant admin.
func clusterQuotaAdmin(ctx context.Context) bool {
	p := httpapi.PrincipalFrom(ctx)
	return p != nil && p.KeyTenant == "" && auth.Allowed(p.Role, auth.ResQuotas, auth.ActWrite)
}

// tenantQuota loads quota id of tenant; another tenant's is not found,
// and a tenant admin may not change the tenant's own quota.
func (h *handlers) tenantQuota(ctx context.Context, tenant string, id int64) (*scheduling.QuotaView, error) {
	q, err := h.s.Quota(ctx, id)
	if errors.Is(err, controlplane.ErrNotFound) || (err == nil && q.Tenant != tenant) {
		return nil, controlplane.Coded(controlplane.ErrNotFound, CodeQuotaNotFound, []string{"id", strconv.FormatInt(id, 10), "tenant", tenant},
			"tenant %q has no quota %d", tenant, id)
	}
	if err != nil {
		return nil, err
	}
	if q.Project == "" && !clusterQuotaAdmin(ctx) {
		return nil, tenantLevel(tenant)
	}
	return &q, nil
}

func tenantLevel(tenant string) error {
	return controlplane.InvalidCode(CodeQuotaTenantLevel, []string{"tenant", tenant},
		"the quota of tenant %q itself is set by cluster administrators; tenant admins set their projects' quotas", tenant)
}

// withinTenant applies the tenant admin's bounds to q (cluster admins set
// any quota): a project of the tenant, each limit no larger than the
// tenant's own quota for the same vendor or for all vendors, and not
// unlimited where the tenant's is limited.
func (h *handlers) withinTenant(ctx context.Context, q scheduling.QuotaView) error {
	if err := h.quotaTargetExists(ctx, q); err != nil {
		return err
	}
	if clusterQuotaAdmin(ctx) {
		return nil
	}
	if q.Project == "" {
		return tenantLevel(q.Tenant)
	}
	all, err := h.s.Quotas(ctx)
	if err != nil {
		return err
	}
	for _, tq := range all.Items {
		if tq.Tenant != q.Tenant || tq.Project != "" || (tq.Vendor != "" && tq.Vendor != q.Vendor) {
			continue
		}
		for _, f := range []struct {
			name         string
			limit, bound int64
		}{{"devices", q.Devices, tq.Devices}, {"memory_mib", q.MemoryMiB, tq.MemoryMiB}, {"compute_percent", q.ComputePercent, tq.ComputePercent}} {
			if f.bound == 0 || (f.limit > 0 && f.limit <= f.bound) {
				continue
			}
			limit, limitKind := strconv.FormatInt(f.limit, 10), "value"
			if f.limit == 0 {
				limit, limitKind = "unlimited", "unlimited"
			}
			vendor, vendorKind := tq.Vendor, "one"
			if vendor == "" {
				vendor, vendorKind = "all vendors", "all"
			}
			// The *_kind params let the console word both cases in each language.
			return controlplane.InvalidCode(CodeQuotaExceedsTenant,
				[]string{"field", f.name, "limit", limit, "limit_kind", limitKind, "tenant_limit", strconv.FormatInt(f.bound, 10),
					"tenant", q.Tenant, "vendor", vendor, "vendor_kind", vendorKind},
				"%s %s of project %q is over tenant %q's quota of %d (%s)", f.name, limit, q.Project, q.Tenant, f.bound, vendor)
		}
	}
	return nil
}

// visibleQuotas narrows a quota list to the caller's tenants (everything
// for cluster-wide roles).
func visibleQuotas(ctx context.Context, l scheduling.QuotaList) scheduling.QuotaList {
	p := httpapi.PrincipalFrom(ctx)
	if p.ClusterWide() {
		return l
	}
	mine := p.TenantNames()
	out := scheduling.QuotaList{Items: []scheduling.QuotaView{}}
	for _, q := range l.Items {
		if slices.Contains(mine, q.Tenant) {
			out.Items = append(out.Items, q)
		}
	}
	out.Total = len(out.Items)
	return out
}
