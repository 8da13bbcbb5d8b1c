package httpapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/heteroflow/heteroflow/controlplane"
)

// MyTenantJSON is one tenant the caller can switch to.
type MyTenantJSON struct {
	Name        string `json:"name"`
	DisplayName string `json:"display_name"`
	Disabled    bool   `json:"disabled"`
	Role        string `json:"role,omitempty" doc:"The caller's tenant role; empty for cluster-wide callers who are not members"`
}

// MyTenancyJSON is the caller's current tenant and every tenant it may switch to.
type MyTenancyJSON struct {
	Current     string         `json:"current"`
	ClusterWide bool           `json:"cluster_wide" doc:"Admins and operators act in every tenant"`
	Tenants     []MyTenantJSON `json:"tenants"`
}

type switchTenantIn struct {
	Body struct {
		Tenant string `json:"tenant" maxLength:"128" doc:"The tenant new tasks go to by default; \"\" for none"`
	}
}

func (a *API) registerMyTenants() {
	tags := []string{"auth"}
	Register(a, huma.Operation{OperationID: "my-tenants", Method: http.MethodGet, Path: Prefix + "/auth/tenants",
		Summary: "The caller's tenants and current tenant", Tags: tags}, Authenticated, a.myTenants)
	Register(a, huma.Operation{OperationID: "switch-tenant", Metadata: Audited("auth.tenant.switch"), Method: http.MethodPut, Path: Prefix + "/auth/tenant",
		Summary:     "Switch the caller's current tenant (where tasks go by default)",
		Description: "The tenant must exist and be enabled, and the caller must be a member of it (admins and operators: any tenant). Refresh the access token afterwards to carry the new tenant.",
		Tags:        tags, Errors: []int{404}}, Authenticated, a.switchTenant)
}

func (a *API) myTenancy(ctx context.Context, current string) (*MyTenancyJSON, error) {
	p := PrincipalFrom(ctx)
	out := &MyTenancyJSON{Current: current, ClusterWide: p.ClusterWide(), Tenants: []MyTenantJSON{}}
	all, err := a.tenantStore().ListTenants(ctx)
	if err != nil {
		return nil, err
	}
	for _, t := range all {
		m := controlplane.MembershipIn(p.Memberships, t.Name)
		if m == nil && !p.ClusterWide() {
			continue
		}
		mt := MyTenantJSON{Name: t.Name, DisplayName: t.DisplayName, Disabled: t.Disabled}
		if m != nil {
			mt.Role = string(m.Role)
		}
		out.Tenants = append(out.Tenants, mt)
	}
	return out, nil
}

func (a *API) myTenants(ctx context.Context, _ *struct{}) (*Body[MyTenancyJSON], error) {
	p := PrincipalFrom(ctx)
	current := p.Tenant
	if p.UserID != 0 {
		u, err := a.store.GetUser(ctx, p.UserID)
		if err != nil {
			return nil, err
		}
		current = u.Tenant
	}
	out, err := a.myTenancy(ctx, current)
	if err != nil {
		return nil, err
	}
	return &Body[MyTenancyJSON]{Body: *out}, nil
}

func (a *API) switchTenant(ctx context.Context, in *switchTenantIn) (*Body[MyTenancyJSON], error) {
	p := PrincipalFrom(ctx)
	want := in.Body.Tenant
	SetAudit(ctx, "auth.tenant.switch", tenantTarget(want))
	if p.Role == controlplane.RoleAgent || (p.KeyTenant != "" && want != p.KeyTenant) {
		return nil, tenantForbidden(want) // agents and tenant-scoped keys stay where they are
	}
	if want != "" {
		t, err := a.loadTenant(ctx, want)
		if err != nil {
			return nil, err
		}
		if !p.ClusterWide() && p.MembershipOf(want) == nil {
			return nil, tenantForbidden(want)
		}
		if t.Disabled {
			return nil, CodedError(http.StatusForbidden, CodeTenantDisabled, "tenant "+want+" is disabled")
		}
	}
	if _, err := a.store.UpdateUser(ctx, p.UserID, controlplane.UserUpdate{Tenant: &want}); err != nil {
		return nil, err
	}
	a.auth.ForgetOwner(p.UserID)
	out, err := a.myTenancy(ctx, want)
	if err != nil {
		return nil, err
	}
	return &Body[MyTenancyJSON]{Body: *out}, nil
}
