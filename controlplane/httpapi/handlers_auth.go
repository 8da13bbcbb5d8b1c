package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/auth"
)

type loginIn struct {
	Body struct {
		Username string `json:"username" minLength:"1" maxLength:"64"`
		Password string `json:"password" minLength:"1" maxLength:"1024"`
	}
}

type refreshIn struct {
	Body struct {
		RefreshToken string `json:"refresh_token" minLength:"1" maxLength:"512"`
	}
}

type registerIn struct {
	Body struct {
		Username    string `json:"username" minLength:"1" maxLength:"64"`
		Password    string `json:"password" minLength:"1" maxLength:"1024"`
		Email       string `json:"email,omitempty" maxLength:"254"`
		DisplayName string `json:"display_name,omitempty" maxLength:"128"`
	}
}

func (a *API) registerAuth() {
	Register(a, huma.Operation{OperationID: "login", Metadata: Audited("auth.login"), Method: http.MethodPost, Path: Prefix + "/auth/login",
		Summary: "Log in with username and password", Tags: []string{"auth"}, Errors: []int{423, 429}},
		Public, a.login)
	Register(a, huma.Operation{OperationID: "refresh", Metadata: Audited("auth.refresh"), Method: http.MethodPost, Path: Prefix + "/auth/refresh",
		Summary: "Exchange a refresh token for a new session (rotation)", Tags: []string{"auth"}},
		Public, a.refresh)
	Register(a, huma.Operation{OperationID: "logout", Metadata: Audited("auth.logout"), Method: http.MethodPost, Path: Prefix + "/auth/logout",
		Summary: "Revoke the refresh token's session", Tags: []string{"auth"}, DefaultStatus: http.StatusNoContent},
		Authenticated, a.logout)
	Register(a, huma.Operation{OperationID: "register", Metadata: Audited("auth.register"), Method: http.MethodPost, Path: Prefix + "/auth/register",
		Summary: "Self-register (pending until an admin approves); 403 when disabled", Tags: []string{"auth"},
		DefaultStatus: http.StatusCreated},
		Public, a.register)
	Register(a, huma.Operation{OperationID: "me", Method: http.MethodGet, Path: Prefix + "/auth/me",
		Summary: "The caller's own user (through an API key: with the role, and tenant, the key acts with)", Tags: []string{"auth"}},
		Authenticated, a.me)
}

func (a *API) sessionJSON(s *auth.Session) *Body[SessionJSON] {
	return &Body[SessionJSON]{Body: SessionJSON{AccessToken: s.AccessToken, RefreshToken: s.RefreshToken, TokenType: "Bearer",
		ExpiresIn: int(a.auth.Tokens().TTL().Seconds()), User: userJSON(s.User)}}
}

func (a *API) login(ctx context.Context, in *loginIn) (*Body[SessionJSON], error) {
	SetAuditModule(ctx, controlplane.ModuleAuth)
	SetAudit(ctx, "auth.login", "user/"+in.Body.Username)
	SetAuditActor(ctx, in.Body.Username)
	s, err := a.auth.Login(ctx, in.Body.Username, in.Body.Password, ClientIP(ctx))
	if err != nil {
		return nil, err
	}
	SetAudit(ctx, "auth.login", "user/"+strconv.FormatInt(s.User.ID, 10))
	return a.sessionJSON(s), nil
}

func (a *API) refresh(ctx context.Context, in *refreshIn) (*Body[SessionJSON], error) {
	SetAuditModule(ctx, controlplane.ModuleAuth)
	SetAudit(ctx, "auth.refresh", "")
	s, err := a.auth.Refresh(ctx, in.Body.RefreshToken)
	if err != nil {
		return nil, err
	}
	SetAuditActor(ctx, s.User.Username)
	SetAudit(ctx, "auth.refresh", "user/"+strconv.FormatInt(s.User.ID, 10))
	if !a.auth.SuccessAuditDue("refresh:user/" + strconv.FormatInt(s.User.ID, 10)) {
		SkipAudit(ctx) // a refresh of this user was audited within the period
	}
	return a.sessionJSON(s), nil
}

func (a *API) logout(ctx context.Context, in *refreshIn) (*struct{}, error) {
	SetAuditModule(ctx, controlplane.ModuleAuth)
	p := PrincipalFrom(ctx)
	SetAudit(ctx, "auth.logout", "user/"+strconv.FormatInt(p.UserID, 10))
	if err := a.auth.Logout(ctx, in.Body.RefreshToken, p.UserID); err != nil {
		return nil, err
	}
	return &struct{}{}, nil
}

func (a *API) register(ctx context.Context, in *registerIn) (*Body[UserJSON], error) {
	SetAuditModule(ctx, controlplane.ModuleAuth)
	SetAudit(ctx, "auth.register", "user/"+in.Body.Username)
	SetAuditActor(ctx, in.Body.Username)
	on, err := a.registrationEnabled(ctx)
	if err != nil {
		return nil, err
	}
	if !on {
		return nil, fmt.Errorf("%w: self-registration is disabled; ask an administrator for an account", controlplane.ErrForbidden)
	}
	u := &controlplane.User{Username: in.Body.Username, Email: in.Body.Email, DisplayName: in.Body.DisplayName,
		Role: controlplane.RoleUser, Status: controlplane.UserPending}
	if err := a.createUser(ctx, u, in.Body.Password); err != nil {
		return nil, err
	}
	return &Body[UserJSON]{Body: userJSON(u)}, nil
}

func (a *API) me(ctx context.Context, _ *struct{}) (*Body[UserJSON], error) {
	p := PrincipalFrom(ctx)
	u, err := a.store.GetUser(ctx, p.UserID)
	if err != nil {
		return nil, err
	}
	out := userJSON(u)
	if p.APIKeyID != 0 {
		// A key acts with its own role (at most its owner's) and, when
		// tenant-scoped, in its tenant: that is who the caller is here.
		out.Role = p.Role
		if p.KeyTenant != "" {
			out.Tenant = p.KeyTenant
		}
	}
	return &Body[UserJSON]{Body: out}, nil
}

// validUsername: 1–64 of letters, digits, '.', '_', '-'; no spaces so names
// stay unambiguous in the audit log and URLs.
func validUsername(s string) error {
	if s == "" || len(s) > 64 {
		return controlplane.Invalidf("username must be 1–64 characters")
	}
	if strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-')
	}) >= 0 {
		return controlplane.Invalidf("username may contain only letters, digits, '.', '_' and '-'")
	}
	return nil
}

// createUser validates, hashes the password and stores u.
func (a *API) createUser(ctx context.Context, u *controlplane.User, password string) error {
	if err := validUsername(u.Username); err != nil {
		return err
	}
	if !u.Role.Valid() || u.Role == controlplane.RoleAgent {
		return controlplane.Invalidf("role must be admin, operator, user or viewer, not %q", u.Role)
	}
	hash, err := a.auth.NewPasswordHash(password, u.Username)
	if err != nil {
		return err
	}
	u.PasswordHash = hash
	if err := a.store.CreateUser(ctx, u); err != nil {
		return fmt.Errorf("create user %s: %w", u.Username, err)
	}
	SetAudit(ctx, auditAction(ctx, "user.create"), "user/"+strconv.FormatInt(u.ID, 10))
	return nil
}

// auditAction keeps an action already named by the caller (auth.register).
func auditAction(ctx context.Context, def string) string {
	if n := noteFrom(ctx); n != nil {
		n.mu.Lock()
		defer n.mu.Unlock()
		if n.action != "" {
			return n.action
		}
	}
	return def
}
