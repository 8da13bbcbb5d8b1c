package httpapi

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/auth"
)

// tenantStore is the store's tenant persistence (every shipped store has
// it; a store without it leaves the caller in no tenant).
func (a *API) tenantStore() controlplane.TenantStore {
	ts, _ := a.store.(controlplane.TenantStore)
	return ts
}

// loadMemberships fills p's tenant roles, once per request, from the
// auth service's account cache, which every write that changes a user's
// memberships, role, status or current tenant, or a tenant's state, clears
// on this server before it answers (auth.Service.Account): a removal, a
// disabled account, a disabled tenant or a changed cluster role applies to
// the next request. A token of an account disabled or deleted since it was
// issued is refused.
// Agents act only as their node and belong to no tenant.
func (a *API) loadMemberships(ctx context.Context, p *auth.Principal) error {
	if p.Role == controlplane.RoleAgent || p.UserID == 0 {
		return nil
	}
	acc, err := a.auth.Account(ctx, p.UserID)
	if errors.Is(err, controlplane.ErrNotFound) || err == nil && acc.Status != controlplane.UserActive {
		return errAccountGone
	}
	if err != nil {
		return fmt.Errorf("load account: %w", err)
	}
	if p.APIKeyID == 0 {
		// An access token acts with the account's role as it is now, not
		// as it was when the token was issued: a demotion applies to the
		// next request. (An API key keeps its own role, which the key
		// cache re-reads with its owner.)
		p.Role = acc.Role
	}
	p.Memberships = acc.Memberships
	p.NarrowToKeyTenant()
	return nil
}

var errAccountGone = fmt.Errorf("%w: the account is disabled or no longer exists", controlplane.ErrUnauthenticated)

// tenantErr turns a store miss of tenant into the coded answer.
func tenantErr(tenant string, err error) error {
	if errors.Is(err, controlplane.ErrNotFound) {
		return CodedError(400, CodeTenantNotFound, fmt.Sprintf("tenant %q does not exist", tenant))
	}
	return err
}

// admitTaskTenant decides the tenant and project a task submitted by p
// runs in: "" takes p's current tenant; the tenant must exist and be
// enabled, and p must be cluster-wide or a member (not a viewer) of it; a
// named project must exist in it and be enabled. A task without a tenant
// (and its free-text project) stays possible, as before tenants were
// objects.
func (a *API) admitTaskTenant(ctx context.Context, p *auth.Principal, spec *controlplane.TaskSpec) error {
	if p.KeyTenant != "" {
		// A tenant-scoped key submits into its tenant only.
		if spec.Tenant == "" {
			spec.Tenant = p.KeyTenant
		}
		if spec.Tenant != p.KeyTenant {
			return tenantForbidden(spec.Tenant)
		}
	}
	if spec.Tenant == "" {
		spec.Tenant = p.Tenant
		if p.UserID != 0 {
			// The current tenant as switched last, not as the token was issued.
			acc, err := a.auth.Account(ctx, p.UserID)
			if err != nil {
				return err
			}
			spec.Tenant = acc.Tenant
		}
		if spec.Tenant != "" && !p.ClusterWide() && p.MembershipOf(spec.Tenant) == nil {
			// The account's current tenant no longer admits it: say so
			// rather than run the task outside any tenant.
			return tenantForbidden(spec.Tenant)
		}
	}
	if spec.Tenant == "" {
		return nil // a project outside any tenant stays free text, as before tenants were objects
	}
	ts := a.tenantStore()
	if ts == nil {
		if spec.Tenant != p.Tenant && !p.ClusterWide() {
			return tenantForbidden(spec.Tenant)
		}
		return nil
	}
	t, err := ts.GetTenant(ctx, spec.Tenant)
	if err != nil {
		return tenantErr(spec.Tenant, err)
	}
	if !p.ClusterWide() {
		switch p.TenantRole(t.Name) {
		case "":
			return tenantForbidden(t.Name)
		case controlplane.TenantViewerRole:
			return CodedError(403, CodeTenantReadOnly, fmt.Sprintf("you are a viewer of tenant %q and cannot submit tasks into it", t.Name))
		}
	}
	if t.Disabled {
		return CodedError(403, CodeTenantDisabled, fmt.Sprintf("tenant %q is disabled and accepts no new tasks", t.Name))
	}
	if spec.Project == "" {
		return nil
	}
	pr, err := ts.GetProject(ctx, t.Name, spec.Project)
	if errors.Is(err, controlplane.ErrNotFound) {
		return CodedError(400, CodeProjectNotFound, fmt.Sprintf("tenant %q has no project %q", t.Name, spec.Project))
	}
	if err != nil {
		return err
	}
	if pr.Disabled {
		return CodedError(403, CodeProjectDisabled, fmt.Sprintf("project %q of tenant %q is disabled", pr.Name, t.Name))
	}
	return nil
}

// AdmitForwardedTask applies the tenant admission of POST /tasks, and its
// refusal of reserved labels, to a task the caller has another server run
// for it (the multi-cluster hub forwards with its own admin key, so the
// member admits any tenant and label): spec.Tenant is set to the tenant
// the task runs in.
func (a *API) AdmitForwardedTask(ctx context.Context, spec *TaskSpecJSON) error {
	d := specDomain(*spec)
	p := PrincipalFrom(ctx)
	if err := a.admitTaskTenant(ctx, p, &d); err != nil {
		return err
	}
	// The member sees the hub's admin key, so it would take any label:
	// the hub refuses the reserved ones below operator, as POST /tasks does.
	if err := reservedLabels(p, d.Labels); err != nil {
		return err
	}
	spec.Tenant = d.Tenant
	return nil
}

// scopeTenantFilter narrows a list's tenant filter to what p may see: ""
// with visible = p's tenants (nil for cluster-wide callers, who see all),
// or an explicit tenant p must belong to.
func scopeTenantFilter(p *auth.Principal, want string) (visible []string, err error) {
	if p.ClusterWide() {
		return nil, nil
	}
	mine := p.TenantNames()
	if want != "" && !slices.Contains(mine, want) {
		return nil, tenantForbidden(want)
	}
	return mine, nil
}
