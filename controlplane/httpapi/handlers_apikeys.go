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

type listKeysIn struct {
	PageParams
}

type createKeyIn struct {
	Body struct {
		Name      string            `json:"name" minLength:"1" maxLength:"128"`
		Role      controlplane.Role `json:"role" enum:"admin,operator,user,viewer,agent"`
		NodeID    string            `json:"node_id,omitempty" maxLength:"253" doc:"Node an agent key belongs to"`
		ExpiresAt *time.Time        `json:"expires_at,omitempty"`
	}
}

func (a *API) registerAPIKeys() {
	tags := []string{"apikeys"}
	Register(a, huma.Operation{OperationID: "list-apikeys", Method: http.MethodGet, Path: Prefix + "/apikeys",
		Summary: "List API keys (own; admins see all)", Tags: tags}, Perm(auth.ResAPIKeys, auth.ActRead), a.listKeys)
	Register(a, huma.Operation{OperationID: "create-apikey", Metadata: Audited("apikey.create"), Method: http.MethodPost, Path: Prefix + "/apikeys",
		Summary: "Create an API key with a role at most the creator's", Tags: tags, DefaultStatus: http.StatusCreated},
		Perm(auth.ResAPIKeys, auth.ActWrite), a.createKey)
	Register(a, huma.Operation{OperationID: "revoke-apikey", Metadata: Audited("apikey.revoke"), Method: http.MethodDelete, Path: Prefix + "/apikeys/{id}",
		Summary: "Revoke an API key", Tags: tags, DefaultStatus: http.StatusNoContent},
		Perm(auth.ResAPIKeys, auth.ActDelete), a.revokeKey)
}

// keyOwnerScope: admins act on every key, others on their own (0 = all).
func keyOwnerScope(p *auth.Principal) int64 {
	if p.Role == controlplane.RoleAdmin {
		return 0
	}
	return p.UserID
}

func (a *API) listKeys(ctx context.Context, in *listKeysIn) (*Body[*List[APIKeyJSON]], error) {
	p := in.page()
	rows, total, err := a.store.ListAPIKeys(ctx, keyOwnerScope(PrincipalFrom(ctx)), p)
	if err != nil {
		return nil, err
	}
	return &Body[*List[APIKeyJSON]]{Body: newList(rows, total, p, apiKeyJSON)}, nil
}

func (a *API) createKey(ctx context.Context, in *createKeyIn) (*Body[CreatedAPIKeyJSON], error) {
	SetAudit(ctx, "apikey.create", "apikey/"+in.Body.Name)
	key, k, err := a.auth.CreateAPIKey(ctx, PrincipalFrom(ctx), in.Body.Name, in.Body.Role, in.Body.NodeID, in.Body.ExpiresAt)
	if err != nil {
		return nil, err
	}
	SetAudit(ctx, "apikey.create", "apikey/"+k.Prefix)
	SetAuditDetail(ctx, "role="+string(k.Role))
	return &Body[CreatedAPIKeyJSON]{Body: CreatedAPIKeyJSON{APIKeyJSON: apiKeyJSON(k), Key: key}}, nil
}

func (a *API) revokeKey(ctx context.Context, in *idIn) (*struct{}, error) {
	SetAudit(ctx, "apikey.revoke", "apikey/"+strconv.FormatInt(in.ID, 10))
	k, err := a.findKey(ctx, keyOwnerScope(PrincipalFrom(ctx)), in.ID)
	if err != nil {
		return nil, err
	}
	SetAudit(ctx, "apikey.revoke", "apikey/"+k.Prefix)
	if err := a.auth.RevokeAPIKey(ctx, k); err != nil {
		return nil, err
	}
	return &struct{}{}, nil
}

// findKey looks a key up by id among those owner may see. The Store has no
// get-by-id for keys, so this pages through the owner's keys (few per user).
func (a *API) findKey(ctx context.Context, owner, id int64) (*controlplane.APIKey, error) {
	page := controlplane.Page{Limit: controlplane.MaxPageLimit}
	for {
		rows, total, err := a.store.ListAPIKeys(ctx, owner, page)
		if err != nil {
			return nil, err
		}
		for _, k := range rows {
			if k.ID == id {
				return k, nil
			}
		}
		page.Offset += len(rows)
		if len(rows) == 0 || page.Offset >= total {
			return nil, fmt.Errorf("%w: api key %d", controlplane.ErrNotFound, id)
		}
	}
}
