package controlplane

import (
	"context"
	"fmt"
	"regexp"
	"time"
)

// TenantRole is a user's role inside one tenant. It is separate from the
// cluster role (User.Role): a cluster "user" can be tenant-admin of one
// tenant and viewer of another.
type TenantRole string

const (
	// TenantAdminRole manages the tenant's members, projects and project
	// quotas and sees every task of the tenant.
	TenantAdminRole TenantRole = "tenant-admin"
	// TenantMemberRole submits tasks into the tenant and sees its own.
	TenantMemberRole TenantRole = "member"
	// TenantViewerRole sees the tenant's tasks read-only and submits nothing.
	TenantViewerRole TenantRole = "viewer"
)

// Valid reports whether r is a known tenant role.
func (r TenantRole) Valid() bool {
	switch r {
	case TenantAdminRole, TenantMemberRole, TenantViewerRole:
		return true
	}
	return false
}

// Tenant is an organisation that owns tasks, quotas, projects and usage.
// Name is the immutable key every task, quota and usage record names (the
// string that was free text before tenants were objects); DisplayName is
// what a rename changes. A disabled tenant accepts no new tasks and no
// logins into it; what it stored stays.
type Tenant struct {
	ID          int64
	Name        string
	DisplayName string
	Disabled    bool
	// NodeSelector dedicates the nodes whose labels match every pair to
	// this tenant: its tasks run only there, other tenants' never do.
	// Empty: no dedicated pool.
	NodeSelector map[string]string
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// Project groups a tenant's tasks (TaskSpec.Project) for quotas and usage.
type Project struct {
	ID          int64
	Tenant      string
	Name        string
	DisplayName string
	Disabled    bool
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// Membership is one user's role in one tenant.
type Membership struct {
	Tenant         string
	TenantDisabled bool
	UserID         int64
	Username       string
	Role           TenantRole
	CreatedAt      time.Time
}

// TenantUpdate carries the fields an update changes; nil means unchanged.
type TenantUpdate struct {
	DisplayName  *string
	Disabled     *bool
	NodeSelector *map[string]string
}

// ProjectUpdate carries the fields an update changes; nil means unchanged.
type ProjectUpdate struct {
	DisplayName *string
	Disabled    *bool
}

// TenantStore persists tenants, projects and memberships. Tenants and
// projects are addressed by name; a missing one is ErrNotFound, a taken
// name ErrConflict.
type TenantStore interface {
	CreateTenant(ctx context.Context, t *Tenant) error // sets ID, CreatedAt, UpdatedAt
	GetTenant(ctx context.Context, name string) (*Tenant, error)
	ListTenants(ctx context.Context) ([]*Tenant, error) // by name
	UpdateTenant(ctx context.Context, name string, upd TenantUpdate) (*Tenant, error)

	// CreateProject: ErrNotFound when p.Tenant does not exist.
	CreateProject(ctx context.Context, p *Project) error
	GetProject(ctx context.Context, tenant, name string) (*Project, error)
	ListProjects(ctx context.Context, tenant string) ([]*Project, error) // by name
	UpdateProject(ctx context.Context, tenant, name string, upd ProjectUpdate) (*Project, error)

	// PutMember adds userID to tenant with role, or changes the role of an
	// existing member. ErrNotFound when the tenant or the user is missing.
	PutMember(ctx context.Context, tenant string, userID int64, role TenantRole) (*Membership, error)
	RemoveMember(ctx context.Context, tenant string, userID int64) error
	ListMembers(ctx context.Context, tenant string) ([]*Membership, error)    // by username
	ListMemberships(ctx context.Context, userID int64) ([]*Membership, error) // by tenant name
}

// tenantName is the shape of new tenant and project names: they end up in
// metric labels, URLs and CLI arguments, so no spaces or slashes.
var tenantName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// ValidTenantName checks a new tenant or project name.
func ValidTenantName(what, name string) error {
	if !tenantName.MatchString(name) {
		return Invalidf("%s name must be 1–64 letters, digits, '.', '_' or '-', starting with a letter or digit, not %q", what, name)
	}
	return nil
}

// Validate checks a tenant before it is stored.
func (t *Tenant) Validate() error {
	if err := ValidTenantName("tenant", t.Name); err != nil {
		return err
	}
	if len(t.DisplayName) > 128 {
		return Invalidf("display_name must be at most 128 characters")
	}
	return validSelector(t.NodeSelector)
}

// Validate checks a project before it is stored.
func (p *Project) Validate() error {
	if p.Tenant == "" {
		return Invalidf("a project needs a tenant")
	}
	if err := ValidTenantName("project", p.Name); err != nil {
		return err
	}
	if len(p.DisplayName) > 128 {
		return Invalidf("display_name must be at most 128 characters")
	}
	return nil
}

func validSelector(sel map[string]string) error {
	if len(sel) > 16 {
		return Invalidf("node_selector may hold at most 16 labels")
	}
	for k, v := range sel {
		if k == "" || len(k) > 63 || len(v) > 63 {
			return Invalidf("node_selector label %q: keys must be 1–63 characters, values at most 63", k)
		}
	}
	return nil
}

// SelectorMatches reports whether labels hold every pair of sel (an empty
// selector matches nothing: it dedicates no pool).
func SelectorMatches(sel, labels map[string]string) bool {
	if len(sel) == 0 {
		return false
	}
	for k, v := range sel {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// MembershipIn returns the caller's membership of tenant in ms, or nil.
func MembershipIn(ms []*Membership, tenant string) *Membership {
	for _, m := range ms {
		if m.Tenant == tenant {
			return m
		}
	}
	return nil
}

// String is the membership as audit details name it.
func (m *Membership) String() string { return fmt.Sprintf("%s:%s", m.Tenant, m.Role) }
