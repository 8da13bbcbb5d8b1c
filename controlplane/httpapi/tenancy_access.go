package httpapi

import (
	"context"
	"fmt"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/auth"
)

// TenantRule is how a route's {tenant} path parameter narrows or widens
// its permission.
type TenantRule uint8

const (
	// NoTenantRule: the route has no {tenant}; the permission decides.
	NoTenantRule TenantRule = iota
	// TenantMembers: besides the permission, callers below operator must
	// be a member (any tenant role) of {tenant}.
	TenantMembers
	// TenantAdmins: holders of the permission pass, and so does the
	// tenant-admin of {tenant} whatever their cluster role (never agents).
	TenantAdmins
)

// InTenant returns a with rule r for the route's {tenant}.
func (a Access) InTenant(r TenantRule) Access { a.Tenant = r; return a }

func (r TenantRule) suffix() string {
	switch r {
	case TenantMembers:
		return " (members of {tenant})"
	case TenantAdmins:
		return " (or tenant-admin of {tenant})"
	}
	return ""
}

// Relation is a caller's relation to the tenant a request names: the
// permission matrix walks every route with each of them.
type Relation string

const (
	RelNone        Relation = "none"         // member of no tenant
	RelOther       Relation = "other"        // member of another tenant only
	RelViewer      Relation = "viewer"       // viewer of this tenant
	RelMember      Relation = "member"       // member of this tenant
	RelTenantAdmin Relation = "tenant-admin" // tenant-admin of this tenant
)

// Relations lists every relation, for tests that walk them.
func Relations() []Relation {
	return []Relation{RelNone, RelOther, RelViewer, RelMember, RelTenantAdmin}
}

func (r Relation) member() bool { return r == RelViewer || r == RelMember || r == RelTenantAdmin }

// AllowsIn reports whether a caller of role with relation rel to the
// route's {tenant} passes a. For routes without a tenant rule it is Allows.
func (a Access) AllowsIn(role controlplane.Role, rel Relation) bool {
	switch a.Tenant {
	case TenantMembers:
		cluster := role == controlplane.RoleAdmin || role == controlplane.RoleOperator
		return a.Allows(role) && (cluster || rel.member())
	case TenantAdmins:
		return a.Allows(role) || (a.admits(role) && role != controlplane.RoleAgent && rel == RelTenantAdmin)
	}
	return a.Allows(role)
}

// relationOf is p's relation to tenant.
func relationOf(p *auth.Principal, tenant string) Relation {
	switch p.TenantRole(tenant) {
	case controlplane.TenantAdminRole:
		return RelTenantAdmin
	case controlplane.TenantMemberRole:
		return RelMember
	case controlplane.TenantViewerRole:
		return RelViewer
	}
	if len(p.Memberships) > 0 {
		return RelOther
	}
	return RelNone
}

// checkIn is check plus the tenant rule for a request naming tenant.
func checkIn(ctx context.Context, acc Access, tenant string) error {
	if acc.Tenant == NoTenantRule {
		return check(ctx, acc)
	}
	p := PrincipalFrom(ctx)
	if p == nil {
		return check(ctx, acc) // the unauthenticated answer
	}
	if acc.AllowsIn(p.Role, relationOf(p, tenant)) {
		return nil
	}
	if err := check(ctx, acc); err != nil && acc.Tenant == TenantMembers {
		return err // the permission itself is missing
	}
	return tenantForbidden(tenant)
}

// Stable codes of tenancy refusals; the console translates them.
const (
	CodeTenantForbidden = "tenant_forbidden"
	CodeTenantNotFound  = "tenant_not_found"
	CodeTenantDisabled  = "tenant_disabled"
	CodeTenantReadOnly  = "tenant_read_only"
	CodeProjectNotFound = "project_not_found"
	CodeProjectDisabled = "project_disabled"
)

func tenantForbidden(tenant string) error {
	return CodedError(403, CodeTenantForbidden, fmt.Sprintf("you are not allowed to act in tenant %q: ask one of its tenant admins to add you", tenant))
}

// TenantForbidden is the coded refusal of a request naming a tenant the
// caller is not a member of.
func TenantForbidden(tenant string) error { return tenantForbidden(tenant) }
