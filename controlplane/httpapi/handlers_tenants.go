package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/auth"
)

// TenantJSON is a tenant as the API shows it. MyRole is the caller's role
// in it ("" for cluster-wide callers who are not members).
type TenantJSON struct {
	Name         string            `json:"name"`
	DisplayName  string            `json:"display_name"`
	Disabled     bool              `json:"disabled"`
	NodeSelector map[string]string `json:"node_selector,omitempty"`
	MyRole       string            `json:"my_role,omitempty"`
	CreatedAt    time.Time         `json:"created_at"`
	UpdatedAt    time.Time         `json:"updated_at"`
}

// ProjectJSON is a project of a tenant.
type ProjectJSON struct {
	Tenant      string    `json:"tenant"`
	Name        string    `json:"name"`
	DisplayName string    `json:"display_name"`
	Disabled    bool      `json:"disabled"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// MemberJSON is one user's role in a tenant.
type MemberJSON struct {
	Tenant   string    `json:"tenant"`
	UserID   int64     `json:"user_id"`
	Username string    `json:"username"`
	Role     string    `json:"role" enum:"tenant-admin,member,viewer"`
	Since    time.Time `json:"since"`
}

type tenantIn struct {
	Tenant string `path:"tenant" maxLength:"128"`
}

type createTenantIn struct {
	Body struct {
		Name         string            `json:"name" minLength:"1" maxLength:"64"`
		DisplayName  string            `json:"display_name,omitempty" maxLength:"128"`
		NodeSelector map[string]string `json:"node_selector,omitempty" doc:"Dedicates the nodes with all these labels to the tenant"`
	}
}

type patchTenantIn struct {
	Tenant string `path:"tenant" maxLength:"128"`
	Body   struct {
		DisplayName  *string            `json:"display_name,omitempty" maxLength:"128" doc:"Rename: the name tasks and quotas use stays"`
		Disabled     *bool              `json:"disabled,omitempty"`
		NodeSelector *map[string]string `json:"node_selector,omitempty" doc:"{} ends the dedicated pool"`
	}
}

type createProjectIn struct {
	Tenant string `path:"tenant" maxLength:"128"`
	Body   struct {
		Name        string `json:"name" minLength:"1" maxLength:"64"`
		DisplayName string `json:"display_name,omitempty" maxLength:"128"`
	}
}

type patchProjectIn struct {
	Tenant  string `path:"tenant" maxLength:"128"`
	Project string `path:"project" maxLength:"128"`
	Body    struct {
		DisplayName *string `json:"display_name,omitempty" maxLength:"128"`
		Disabled    *bool   `json:"disabled,omitempty"`
	}
}

type putMemberIn struct {
	Tenant string `path:"tenant" maxLength:"128"`
	User   string `path:"user" maxLength:"64" doc:"Username"`
	Body   struct {
		Role controlplane.TenantRole `json:"role" enum:"tenant-admin,member,viewer"`
	}
}

type memberIn struct {
	Tenant string `path:"tenant" maxLength:"128"`
	User   string `path:"user" maxLength:"64" doc:"Username"`
}

func tenantJSON(p *auth.Principal, t *controlplane.Tenant) TenantJSON {
	return TenantJSON{Name: t.Name, DisplayName: t.DisplayName, Disabled: t.Disabled, NodeSelector: t.NodeSelector,
		MyRole: string(p.TenantRole(t.Name)), CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt}
}

func projectJSON(p *controlplane.Project) ProjectJSON {
	return ProjectJSON{Tenant: p.Tenant, Name: p.Name, DisplayName: p.DisplayName, Disabled: p.Disabled, CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}
}

func memberJSON(m *controlplane.Membership) MemberJSON {
	return MemberJSON{Tenant: m.Tenant, UserID: m.UserID, Username: m.Username, Role: string(m.Role), Since: m.CreatedAt}
}

func (a *API) registerTenants() {
	if a.tenantStore() == nil {
		return
	}
	tags := []string{"tenants"}
	read := Perm(auth.ResTenants, auth.ActRead).ForPeople()
	members := read.InTenant(TenantMembers)
	manage := Perm(auth.ResTenants, auth.ActWrite).ForPeople().InTenant(TenantAdmins)
	admin := Perm(auth.ResTenants, auth.ActWrite).ForPeople()
	base := Prefix + "/tenants"
	Register(a, huma.Operation{OperationID: "list-tenants", Method: http.MethodGet, Path: base,
		Summary: "List tenants (below operator: the caller's own)", Tags: tags}, read, a.listTenants)
	Register(a, huma.Operation{OperationID: "create-tenant", Metadata: Audited("tenant.create"), Method: http.MethodPost, Path: base,
		Summary: "Create a tenant", Tags: tags, DefaultStatus: http.StatusCreated, Errors: []int{409}}, admin, a.createTenant)
	Register(a, huma.Operation{OperationID: "get-tenant", Method: http.MethodGet, Path: base + "/{tenant}",
		Summary: "Get a tenant", Tags: tags, Errors: []int{404}}, members, a.getTenant)
	Register(a, huma.Operation{OperationID: "update-tenant", Metadata: Audited("tenant.update"), Method: http.MethodPatch, Path: base + "/{tenant}",
		Summary: "Rename, disable or enable a tenant, or change its dedicated node pool", Tags: tags, Errors: []int{404}}, admin, a.patchTenant)
	Register(a, huma.Operation{OperationID: "list-tenant-members", Method: http.MethodGet, Path: base + "/{tenant}/members",
		Summary: "A tenant's members and their tenant roles", Tags: tags, Errors: []int{404}}, members, a.listMembers)
	Register(a, huma.Operation{OperationID: "put-tenant-member", Metadata: Audited("tenant.member.put"), Method: http.MethodPut, Path: base + "/{tenant}/members/{user}",
		Summary: "Add a user to a tenant or change their tenant role (cluster admin or tenant admin)", Tags: tags, Errors: []int{404, 409}}, manage, a.putMember)
	Register(a, huma.Operation{OperationID: "delete-tenant-member", Metadata: Audited("tenant.member.delete"), Method: http.MethodDelete, Path: base + "/{tenant}/members/{user}",
		Summary: "Remove a user from a tenant (cluster admin or tenant admin)", Tags: tags, DefaultStatus: http.StatusNoContent, Errors: []int{404, 409}}, manage, a.deleteMember)
	Register(a, huma.Operation{OperationID: "list-tenant-projects", Method: http.MethodGet, Path: base + "/{tenant}/projects",
		Summary: "A tenant's projects", Tags: tags, Errors: []int{404}}, members, a.listProjects)
	Register(a, huma.Operation{OperationID: "create-tenant-project", Metadata: Audited("tenant.project.create"), Method: http.MethodPost, Path: base + "/{tenant}/projects",
		Summary: "Create a project in a tenant (cluster admin or tenant admin)", Tags: tags, DefaultStatus: http.StatusCreated, Errors: []int{404, 409}}, manage, a.createProject)
	Register(a, huma.Operation{OperationID: "update-tenant-project", Metadata: Audited("tenant.project.update"), Method: http.MethodPatch, Path: base + "/{tenant}/projects/{project}",
		Summary: "Rename, disable or enable a project (cluster admin or tenant admin)", Tags: tags, Errors: []int{404}}, manage, a.patchProject)
	a.registerMyTenants()
	a.registerTenantKeys()
}

func tenantTarget(name string) string { return "tenant/" + name }

func (a *API) listTenants(ctx context.Context, _ *struct{}) (*Body[[]TenantJSON], error) {
	p := PrincipalFrom(ctx)
	all, err := a.tenantStore().ListTenants(ctx)
	if err != nil {
		return nil, err
	}
	out := []TenantJSON{}
	for _, t := range all {
		if p.ClusterWide() || controlplane.MembershipIn(p.Memberships, t.Name) != nil {
			out = append(out, tenantJSON(p, t))
		}
	}
	return &Body[[]TenantJSON]{Body: out}, nil
}

func (a *API) createTenant(ctx context.Context, in *createTenantIn) (*Body[TenantJSON], error) {
	SetAudit(ctx, "tenant.create", tenantTarget(in.Body.Name))
	t := &controlplane.Tenant{Name: in.Body.Name, DisplayName: in.Body.DisplayName, NodeSelector: in.Body.NodeSelector}
	if err := a.tenantStore().CreateTenant(ctx, t); err != nil {
		return nil, err
	}
	return &Body[TenantJSON]{Body: tenantJSON(PrincipalFrom(ctx), t)}, nil
}

// loadTenant returns the tenant the path names, as the coded 404.
func (a *API) loadTenant(ctx context.Context, name string) (*controlplane.Tenant, error) {
	t, err := a.tenantStore().GetTenant(ctx, name)
	if errors.Is(err, controlplane.ErrNotFound) {
		return nil, CodedError(http.StatusNotFound, CodeTenantNotFound, fmt.Sprintf("tenant %q does not exist", name))
	}
	return t, err
}

func (a *API) getTenant(ctx context.Context, in *tenantIn) (*Body[TenantJSON], error) {
	t, err := a.loadTenant(ctx, in.Tenant)
	if err != nil {
		return nil, err
	}
	return &Body[TenantJSON]{Body: tenantJSON(PrincipalFrom(ctx), t)}, nil
}

func (a *API) patchTenant(ctx context.Context, in *patchTenantIn) (*Body[TenantJSON], error) {
	SetAudit(ctx, "tenant.update", tenantTarget(in.Tenant))
	if _, err := a.loadTenant(ctx, in.Tenant); err != nil {
		return nil, err
	}
	b := in.Body
	t, err := a.tenantStore().UpdateTenant(ctx, in.Tenant, controlplane.TenantUpdate{DisplayName: b.DisplayName, Disabled: b.Disabled, NodeSelector: b.NodeSelector})
	if err != nil {
		return nil, err
	}
	detail := ""
	if b.Disabled != nil {
		detail = fmt.Sprintf("disabled=%t", *b.Disabled)
		// Each member's cached memberships carry the tenant's state.
		a.auth.ForgetAccounts()
	}
	SetAuditDetail(ctx, detail)
	return &Body[TenantJSON]{Body: tenantJSON(PrincipalFrom(ctx), t)}, nil
}

func (a *API) listMembers(ctx context.Context, in *tenantIn) (*Body[[]MemberJSON], error) {
	if _, err := a.loadTenant(ctx, in.Tenant); err != nil {
		return nil, err
	}
	ms, err := a.tenantStore().ListMembers(ctx, in.Tenant)
	if err != nil {
		return nil, err
	}
	out := make([]MemberJSON, 0, len(ms))
	for _, m := range ms {
		out = append(out, memberJSON(m))
	}
	return &Body[[]MemberJSON]{Body: out}, nil
}

// memberUser resolves the username of a member route.
func (a *API) memberUser(ctx context.Context, tenant, username string) (*controlplane.User, error) {
	if _, err := a.loadTenant(ctx, tenant); err != nil {
		return nil, err
	}
	u, err := a.store.GetUserByName(ctx, username)
	if errors.Is(err, controlplane.ErrNotFound) {
		return nil, fmt.Errorf("%w: no user %q", controlplane.ErrNotFound, username)
	}
	return u, err
}

func (a *API) putMember(ctx context.Context, in *putMemberIn) (*Body[MemberJSON], error) {
	SetAudit(ctx, "tenant.member.put", tenantTarget(in.Tenant)+"/member/"+in.User)
	u, err := a.memberUser(ctx, in.Tenant, in.User)
	if err != nil {
		return nil, err
	}
	if err := a.keepOneTenantAdmin(ctx, in.Tenant, u.ID, in.Body.Role); err != nil {
		return nil, err
	}
	m, err := a.tenantStore().PutMember(ctx, in.Tenant, u.ID, in.Body.Role)
	if err != nil {
		return nil, err
	}
	SetAuditDetail(ctx, "role="+string(m.Role))
	a.auth.ForgetOwner(u.ID)
	return &Body[MemberJSON]{Body: memberJSON(m)}, nil
}

func (a *API) deleteMember(ctx context.Context, in *memberIn) (*struct{}, error) {
	SetAudit(ctx, "tenant.member.delete", tenantTarget(in.Tenant)+"/member/"+in.User)
	u, err := a.memberUser(ctx, in.Tenant, in.User)
	if err != nil {
		return nil, err
	}
	if err := a.keepOneTenantAdmin(ctx, in.Tenant, u.ID, ""); err != nil {
		return nil, err
	}
	if err := a.tenantStore().RemoveMember(ctx, in.Tenant, u.ID); err != nil {
		return nil, err
	}
	a.auth.ForgetOwner(u.ID)
	return &struct{}{}, nil
}

// keepOneTenantAdmin refuses a tenant admin (not a cluster admin) taking
// away their own tenant-admin role, which would lock them out of managing
// the tenant; another tenant admin or a cluster admin can.
func (a *API) keepOneTenantAdmin(ctx context.Context, tenant string, userID int64, next controlplane.TenantRole) error {
	p := PrincipalFrom(ctx)
	if p.Role == controlplane.RoleAdmin || p.UserID != userID || next == controlplane.TenantAdminRole {
		return nil
	}
	return fmt.Errorf("%w: you cannot give up your own tenant-admin role in %q; another tenant admin or a cluster admin can", controlplane.ErrConflict, tenant)
}

func (a *API) listProjects(ctx context.Context, in *tenantIn) (*Body[[]ProjectJSON], error) {
	if _, err := a.loadTenant(ctx, in.Tenant); err != nil {
		return nil, err
	}
	ps, err := a.tenantStore().ListProjects(ctx, in.Tenant)
	if err != nil {
		return nil, err
	}
	out := make([]ProjectJSON, 0, len(ps))
	for _, p := range ps {
		out = append(out, projectJSON(p))
	}
	return &Body[[]ProjectJSON]{Body: out}, nil
}

func (a *API) createProject(ctx context.Context, in *createProjectIn) (*Body[ProjectJSON], error) {
	SetAudit(ctx, "tenant.project.create", tenantTarget(in.Tenant)+"/project/"+in.Body.Name)
	if _, err := a.loadTenant(ctx, in.Tenant); err != nil {
		return nil, err
	}
	p := &controlplane.Project{Tenant: in.Tenant, Name: in.Body.Name, DisplayName: in.Body.DisplayName}
	if err := a.tenantStore().CreateProject(ctx, p); err != nil {
		return nil, err
	}
	return &Body[ProjectJSON]{Body: projectJSON(p)}, nil
}

func (a *API) patchProject(ctx context.Context, in *patchProjectIn) (*Body[ProjectJSON], error) {
	SetAudit(ctx, "tenant.project.update", tenantTarget(in.Tenant)+"/project/"+in.Project)
	if _, err := a.loadTenant(ctx, in.Tenant); err != nil {
		return nil, err
	}
	p, err := a.tenantStore().UpdateProject(ctx, in.Tenant, in.Project, controlplane.ProjectUpdate{DisplayName: in.Body.DisplayName, Disabled: in.Body.Disabled})
	if errors.Is(err, controlplane.ErrNotFound) {
		return nil, CodedError(http.StatusNotFound, CodeProjectNotFound, fmt.Sprintf("tenant %q has no project %q", in.Tenant, in.Project))
	}
	if err != nil {
		return nil, err
	}
	return &Body[ProjectJSON]{Body: projectJSON(p)}, nil
}

// adoptUserTenant keeps the users API's tenant field working as before
// tenants were objects: naming a tenant creates it when missing (only
// admins reach the users API) and makes the user a member of it (viewers
// as viewer), unless they already are.
func (a *API) adoptUserTenant(ctx context.Context, u *controlplane.User) error {
	ts := a.tenantStore()
	if ts == nil || u.Tenant == "" {
		return nil
	}
	if _, err := ts.GetTenant(ctx, u.Tenant); errors.Is(err, controlplane.ErrNotFound) {
		if err := ts.CreateTenant(ctx, &controlplane.Tenant{Name: u.Tenant}); err != nil && !errors.Is(err, controlplane.ErrConflict) {
			return err
		}
	} else if err != nil {
		return err
	}
	ms, err := ts.ListMemberships(ctx, u.ID)
	if err != nil {
		return err
	}
	if controlplane.MembershipIn(ms, u.Tenant) != nil {
		return nil
	}
	role := controlplane.TenantMemberRole
	if u.Role == controlplane.RoleViewer {
		role = controlplane.TenantViewerRole
	}
	_, err = ts.PutMember(ctx, u.Tenant, u.ID, role)
	return err
}
