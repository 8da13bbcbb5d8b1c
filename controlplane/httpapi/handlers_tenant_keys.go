package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/auth"
)

// Tenant-scoped API keys: a member mints a key that acts only in one
// tenant, with at most the member's role there (viewer members: viewer
// keys). Tenant admins and cluster admins list and revoke every key of the
// tenant, members their own. Every create and revoke is audited.

type createTenantKeyIn struct {
	Tenant string `path:"tenant" maxLength:"128"`
	Body   struct {
		Name      string            `json:"name" minLength:"1" maxLength:"128"`
		Role      controlplane.Role `json:"role,omitempty" enum:"user,viewer" doc:"user (default; submits tasks) or viewer (read only)"`
		ExpiresAt *time.Time        `json:"expires_at,omitempty"`
	}
}

type tenantKeyIn struct {
	Tenant string `path:"tenant" maxLength:"128"`
	ID     int64  `path:"id" minimum:"1"`
}

func (a *API) registerTenantKeys() {
	tags := []string{"tenants", "apikeys"}
	members := Perm(auth.ResTenants, auth.ActRead).ForPeople().InTenant(TenantMembers)
	base := Prefix + "/tenants/{tenant}/apikeys"
	Register(a, huma.Operation{OperationID: "list-tenant-apikeys", Method: http.MethodGet, Path: base,
		Summary: "A tenant's scoped API keys (tenant admins: all; members: their own)", Tags: tags}, members, a.listTenantKeys)
	Register(a, huma.Operation{OperationID: "create-tenant-apikey", Metadata: Audited("apikey.create"), Method: http.MethodPost, Path: base,
		Summary: "Create an API key that acts only in this tenant", Tags: tags, DefaultStatus: http.StatusCreated, Errors: []int{404}},
		members, a.createTenantKey)
	Register(a, huma.Operation{OperationID: "revoke-tenant-apikey", Metadata: Audited("apikey.revoke"), Method: http.MethodDelete, Path: base + "/{id}",
		Summary: "Revoke a tenant's API key (its owner, a tenant admin or a cluster admin)", Tags: tags, DefaultStatus: http.StatusNoContent,
		Errors: []int{404}}, members, a.revokeTenantKey)
}

// tenantKeys returns the keys of tenant that p may manage.
func (a *API) tenantKeys(ctx context.Context, p *auth.Principal, tenant string) ([]*controlplane.APIKey, error) {
	owner := p.UserID
	if p.ManagesTenant(tenant) {
		owner = 0
	}
	var out []*controlplane.APIKey
	page := controlplane.Page{Limit: controlplane.MaxPageLimit}
	for {
		rows, total, err := a.store.ListAPIKeys(ctx, owner, page)
		if err != nil {
			return nil, err
		}
		for _, k := range rows {
			if k.Tenant == tenant {
				out = append(out, k)
			}
		}
		page.Offset += len(rows)
		if len(rows) == 0 || page.Offset >= total {
			return out, nil
		}
	}
}

func (a *API) listTenantKeys(ctx context.Context, in *tenantIn) (*Body[*List[APIKeyJSON]], error) {
	if _, err := a.loadTenant(ctx, in.Tenant); err != nil {
		return nil, err
	}
	keys, err := a.tenantKeys(ctx, PrincipalFrom(ctx), in.Tenant)
	if err != nil {
		return nil, err
	}
	p := controlplane.Page{Limit: controlplane.MaxPageLimit}
	return &Body[*List[APIKeyJSON]]{Body: newList(keys, len(keys), p, apiKeyJSON)}, nil
}

func (a *API) createTenantKey(ctx context.Context, in *createTenantKeyIn) (*Body[CreatedAPIKeyJSON], error) {
	SetAudit(ctx, "apikey.create", "apikey/"+in.Body.Name)
	p := PrincipalFrom(ctx)
	t, err := a.loadTenant(ctx, in.Tenant)
	if err != nil {
		return nil, err
	}
	if t.Disabled {
		return nil, CodedError(http.StatusForbidden, CodeTenantDisabled, "tenant "+t.Name+" is disabled")
	}
	role := in.Body.Role
	if role == "" {
		role = controlplane.RoleUser
	}
	switch p.TenantRole(t.Name) {
	case "":
		return nil, tenantForbidden(t.Name) // a key of a non-member would act nowhere
	case controlplane.TenantViewerRole:
		if role != controlplane.RoleViewer {
			return nil, CodedError(http.StatusForbidden, CodeTenantReadOnly, fmt.Sprintf("you are a viewer of tenant %q: your keys there are viewer keys", t.Name))
		}
	}
	key, k, err := a.auth.CreateTenantAPIKey(ctx, p, in.Body.Name, role, t.Name, in.Body.ExpiresAt)
	if err != nil {
		return nil, err
	}
	SetAudit(ctx, "apikey.create", "apikey/"+k.Prefix)
	SetAuditDetail(ctx, "role="+string(k.Role)+" tenant="+k.Tenant)
	return &Body[CreatedAPIKeyJSON]{Body: CreatedAPIKeyJSON{APIKeyJSON: apiKeyJSON(k), Key: key}}, nil
}

func (a *API) revokeTenantKey(ctx context.Context, in *tenantKeyIn) (*struct{}, error) {
	SetAudit(ctx, "apikey.revoke", "apikey/"+strconv.FormatInt(in.ID, 10))
	if _, err := a.loadTenant(ctx, in.Tenant); err != nil {
		return nil, err
	}
	keys, err := a.tenantKeys(ctx, PrincipalFrom(ctx), in.Tenant)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		if k.ID == in.ID {
			SetAudit(ctx, "apikey.revoke", "apikey/"+k.Prefix)
			SetAuditDetail(ctx, "tenant="+k.Tenant)
			return &struct{}{}, a.auth.RevokeAPIKey(ctx, k)
		}
	}
	return nil, fmt.Errorf("%w: api key %d in tenant %q", controlplane.ErrNotFound, in.ID, in.Tenant)
}
