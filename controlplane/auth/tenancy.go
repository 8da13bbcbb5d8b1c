package auth

import "github.com/heteroflow/heteroflow/controlplane"

// Tenancy on top of the permission table: cluster admins and operators act
// in every tenant; everyone else acts in the tenants they are a member of,
// with the reach of their role there.

// ClusterWide reports whether p's cluster role spans every tenant.
func (p *Principal) ClusterWide() bool {
	return p != nil && p.KeyTenant == "" && (p.Role == controlplane.RoleAdmin || p.Role == controlplane.RoleOperator)
}

// NarrowToKeyTenant keeps only the membership of a tenant-scoped key's
// tenant, capped at viewer for a viewer key; the key of an owner who is
// no longer a member belongs to no tenant.
func (p *Principal) NarrowToKeyTenant() {
	if p == nil || p.KeyTenant == "" {
		return
	}
	var out []*controlplane.Membership
	if m := controlplane.MembershipIn(p.Memberships, p.KeyTenant); m != nil {
		c := *m
		if p.Role == controlplane.RoleViewer {
			c.Role = controlplane.TenantViewerRole
		}
		out = append(out, &c)
	}
	p.Memberships = out
}

// MembershipOf returns p's membership of tenant, or nil. A disabled
// tenant's membership counts as none.
func (p *Principal) MembershipOf(tenant string) *controlplane.Membership {
	if p == nil || tenant == "" {
		return nil
	}
	m := controlplane.MembershipIn(p.Memberships, tenant)
	if m == nil || m.TenantDisabled {
		return nil
	}
	return m
}

// TenantRole is p's role in tenant ("" when not a member).
func (p *Principal) TenantRole(tenant string) controlplane.TenantRole {
	if m := p.MembershipOf(tenant); m != nil {
		return m.Role
	}
	return ""
}

// SeesAllTasksOf reports whether p sees every task of tenant, not only its
// own: cluster-wide roles, tenant admins and tenant viewers do, and so do
// cluster viewers for each tenant they belong to. Plain members see their
// own tasks.
func (p *Principal) SeesAllTasksOf(tenant string) bool {
	if p.ClusterWide() {
		return true
	}
	switch p.TenantRole(tenant) {
	case controlplane.TenantAdminRole, controlplane.TenantViewerRole:
		return true
	case controlplane.TenantMemberRole:
		return p.Role == controlplane.RoleViewer
	}
	return false
}

// TasksTenants lists the tenants whose every task p sees (ignored for
// cluster-wide roles, which see all).
func (p *Principal) TasksTenants() []string {
	var out []string
	for _, m := range p.Memberships {
		if p.SeesAllTasksOf(m.Tenant) {
			out = append(out, m.Tenant)
		}
	}
	return out
}

// TenantNames lists the enabled tenants p belongs to.
func (p *Principal) TenantNames() []string {
	var out []string
	for _, m := range p.Memberships {
		if !m.TenantDisabled {
			out = append(out, m.Tenant)
		}
	}
	return out
}

// ManagesTenant reports whether p may manage tenant's members, projects
// and project quotas: cluster admins, and the tenant's own admins.
func (p *Principal) ManagesTenant(tenant string) bool {
	if p == nil || p.Role == controlplane.RoleAgent {
		return false
	}
	return p.Role == controlplane.RoleAdmin || p.TenantRole(tenant) == controlplane.TenantAdminRole
}
