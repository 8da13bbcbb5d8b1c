package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/danielgtaylor/huma/v2"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/auth"
)

type listUsersIn struct {
	PageParams
	Role   controlplane.Role       `query:"role" enum:"admin,operator,user,viewer,agent" doc:"Only this role"`
	Status controlplane.UserStatus `query:"status" enum:"active,pending,disabled" doc:"Only this status"`
	Q      string                  `query:"q" maxLength:"256" doc:"Substring of username, display name or email"`
}

type createUserIn struct {
	Body struct {
		Username    string            `json:"username" minLength:"1" maxLength:"64"`
		Password    string            `json:"password" minLength:"1" maxLength:"1024"`
		Role        controlplane.Role `json:"role" enum:"admin,operator,user,viewer"`
		DisplayName string            `json:"display_name,omitempty" maxLength:"128"`
		Email       string            `json:"email,omitempty" maxLength:"254"`
		Tenant      string            `json:"tenant,omitempty" maxLength:"128"`
	}
}

type idIn struct {
	ID int64 `path:"id" minimum:"1"`
}

type patchUserIn struct {
	ID   int64 `path:"id" minimum:"1"`
	Body struct {
		Role        *controlplane.Role       `json:"role,omitempty" enum:"admin,operator,user,viewer"`
		Status      *controlplane.UserStatus `json:"status,omitempty" enum:"active,pending,disabled"`
		DisplayName *string                  `json:"display_name,omitempty" maxLength:"128"`
		Email       *string                  `json:"email,omitempty" maxLength:"254"`
		Tenant      *string                  `json:"tenant,omitempty" maxLength:"128"`
		Password    *string                  `json:"password,omitempty" maxLength:"1024"`
	}
}

func (a *API) registerUsers() {
	tags := []string{"users"}
	Register(a, huma.Operation{OperationID: "list-users", Method: http.MethodGet, Path: Prefix + "/users",
		Summary: "List users", Tags: tags}, Perm(auth.ResUsers, auth.ActRead), a.listUsers)
	Register(a, huma.Operation{OperationID: "create-user", Metadata: Audited("user.create"), Method: http.MethodPost, Path: Prefix + "/users",
		Summary: "Create a user", Tags: tags, DefaultStatus: http.StatusCreated}, Perm(auth.ResUsers, auth.ActWrite), a.createUserOp)
	Register(a, huma.Operation{OperationID: "get-user", Method: http.MethodGet, Path: Prefix + "/users/{id}",
		Summary: "Get a user", Tags: tags}, Perm(auth.ResUsers, auth.ActRead), a.getUser)
	Register(a, huma.Operation{OperationID: "update-user", Metadata: Audited("user.update"), Method: http.MethodPatch, Path: Prefix + "/users/{id}",
		Summary: "Change a user's role, status, profile or password", Tags: tags}, Perm(auth.ResUsers, auth.ActWrite), a.patchUser)
	Register(a, huma.Operation{OperationID: "delete-user", Metadata: Audited("user.delete"), Method: http.MethodDelete, Path: Prefix + "/users/{id}",
		Summary: "Delete a user", Tags: tags, DefaultStatus: http.StatusNoContent}, Perm(auth.ResUsers, auth.ActDelete), a.deleteUser)
	Register(a, huma.Operation{OperationID: "approve-user", Metadata: Audited("user.approve"), Method: http.MethodPost, Path: Prefix + "/users/{id}/approve",
		Summary: "Approve a self-registered user", Tags: tags}, Perm(auth.ResUsers, auth.ActWrite), a.approveUser)
	Register(a, huma.Operation{OperationID: "unlock-user", Metadata: Audited("user.unlock"), Method: http.MethodPost, Path: Prefix + "/users/{id}/unlock",
		Summary: "Lift a login lockout", Description: "Clears the user's failed-login count, lock and lockout history.",
		Tags: tags}, Perm(auth.ResUsers, auth.ActWrite), a.unlockUser)
}

func (a *API) listUsers(ctx context.Context, in *listUsersIn) (*Body[*List[UserJSON]], error) {
	p := in.page()
	rows, total, err := a.store.ListUsers(ctx, controlplane.UserFilter{Role: in.Role, Status: in.Status, Query: in.Q, Page: p})
	if err != nil {
		return nil, err
	}
	return &Body[*List[UserJSON]]{Body: newList(rows, total, p, userJSON)}, nil
}

func (a *API) createUserOp(ctx context.Context, in *createUserIn) (*Body[UserJSON], error) {
	SetAudit(ctx, "user.create", "user/"+in.Body.Username)
	u := &controlplane.User{Username: in.Body.Username, Role: in.Body.Role, DisplayName: in.Body.DisplayName,
		Email: in.Body.Email, Tenant: in.Body.Tenant, Status: controlplane.UserActive}
	if err := a.createUser(ctx, u, in.Body.Password); err != nil {
		return nil, err
	}
	if err := a.adoptUserTenant(ctx, u); err != nil {
		return nil, err
	}
	return &Body[UserJSON]{Body: userJSON(u)}, nil
}

func (a *API) getUser(ctx context.Context, in *idIn) (*Body[UserJSON], error) {
	u, err := a.store.GetUser(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	return &Body[UserJSON]{Body: userJSON(u)}, nil
}

func userTarget(id int64) string { return "user/" + strconv.FormatInt(id, 10) }

func (a *API) patchUser(ctx context.Context, in *patchUserIn) (*Body[UserJSON], error) {
	SetAudit(ctx, "user.update", userTarget(in.ID))
	b := in.Body
	upd := controlplane.UserUpdate{Role: b.Role, Status: b.Status, DisplayName: b.DisplayName, Email: b.Email, Tenant: b.Tenant}
	me := PrincipalFrom(ctx)
	if in.ID == me.UserID && ((b.Role != nil && *b.Role != controlplane.RoleAdmin) || (b.Status != nil && *b.Status != controlplane.UserActive)) {
		// An admin demoting or disabling themselves could leave nobody able to administer.
		return nil, fmt.Errorf("%w: you cannot demote or disable your own account", controlplane.ErrConflict)
	}
	if b.Password != nil {
		u, err := a.store.GetUser(ctx, in.ID)
		if err != nil {
			return nil, err
		}
		if u.External() {
			// Its directory or provider holds the password; a local one would open a second door.
			return nil, controlplane.InvalidCode("external_account_password", []string{"source", u.AuthSource},
				"%s signs in through %s and has no local password", u.Username, u.AuthSource)
		}
		hash, err := a.auth.NewPasswordHash(*b.Password, u.Username)
		if err != nil {
			return nil, err
		}
		upd.PasswordHash = &hash
	}
	u, err := a.store.UpdateUser(ctx, in.ID, upd)
	if err != nil {
		return nil, err
	}
	// The owner's keys act with at most the owner's current role, and
	// every request reads the account's status, tenant and memberships:
	// forget them however this ends, so the next request re-reads them.
	defer a.auth.ForgetOwner(u.ID)
	if b.Tenant != nil {
		if err := a.adoptUserTenant(ctx, u); err != nil {
			return nil, err
		}
	}
	if b.Password != nil || (b.Status != nil && *b.Status != controlplane.UserActive) {
		// A new password or a disabled account ends every existing session.
		if err := a.store.RevokeUserRefreshTokens(ctx, u.ID, a.now()); err != nil {
			return nil, err
		}
	}
	return &Body[UserJSON]{Body: userJSON(u)}, nil
}

func (a *API) deleteUser(ctx context.Context, in *idIn) (*struct{}, error) {
	SetAudit(ctx, "user.delete", userTarget(in.ID))
	if in.ID == PrincipalFrom(ctx).UserID {
		return nil, fmt.Errorf("%w: you cannot delete your own account", controlplane.ErrConflict)
	}
	if err := a.store.DeleteUser(ctx, in.ID); err != nil {
		return nil, err
	}
	a.auth.ForgetOwner(in.ID)
	return &struct{}{}, nil
}

func (a *API) unlockUser(ctx context.Context, in *idIn) (*Body[UserJSON], error) {
	SetAudit(ctx, "user.unlock", userTarget(in.ID))
	u, err := a.auth.Unlock(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	return &Body[UserJSON]{Body: userJSON(u)}, nil
}

func (a *API) approveUser(ctx context.Context, in *idIn) (*Body[UserJSON], error) {
	SetAudit(ctx, "user.approve", userTarget(in.ID))
	active := controlplane.UserActive
	u, err := a.store.UpdateUser(ctx, in.ID, controlplane.UserUpdate{Status: &active})
	if err != nil {
		return nil, err
	}
	a.auth.ForgetOwner(u.ID)
	return &Body[UserJSON]{Body: userJSON(u)}, nil
}
