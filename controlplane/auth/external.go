package auth

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode"

	"github.com/heteroflow/heteroflow/controlplane"
)

// External identities: an LDAP directory or an OpenID provider vouches for
// a person; ExternalLogin turns that into a HeteroFlow account (created on
// the first login, kept in sync on every later one) and a session issued
// exactly as for a password login.

// ExternalIdentity is what a directory or provider vouched for.
type ExternalIdentity struct {
	// Source is controlplane.AuthSourceLDAP or AuthSourceOIDCPrefix+name.
	Source string
	// ExternalID is the stable id at the source (LDAP DN, OIDC subject).
	ExternalID  string
	Username    string
	DisplayName string
	Email       string
	// Groups are the directory groups or provider group/role claims the
	// Mapping reads.
	Groups []string
	// Disabled is set when the source says the account may not sign in.
	Disabled bool
}

// GroupRole grants a cluster role to the members of a group.
type GroupRole struct {
	Group string            `yaml:"group"`
	Role  controlplane.Role `yaml:"role"`
}

// GroupTenant makes the members of a group members of a tenant.
type GroupTenant struct {
	Group  string                  `yaml:"group"`
	Tenant string                  `yaml:"tenant"`
	Role   controlplane.TenantRole `yaml:"role"` // default member
}

// Mapping turns an identity's groups into a cluster role and tenant
// memberships. Groups match case-insensitively, by full name (an LDAP
// DN) or by the name the source reports (cn, a claim's value).
type Mapping struct {
	// DefaultRole is the role of a user whom no rule in Roles matches;
	// "" refuses such a user (sso_no_role).
	DefaultRole controlplane.Role `yaml:"default_role"`
	Roles       []GroupRole       `yaml:"group_roles,omitempty"`
	Tenants     []GroupTenant     `yaml:"group_tenants,omitempty"`
}

// Validate names the first bad rule.
func (m Mapping) Validate(where string) error {
	if m.DefaultRole != "" && (!m.DefaultRole.Valid() || m.DefaultRole == controlplane.RoleAgent) {
		return fmt.Errorf("%s.default_role %q must be admin, operator, user, viewer or empty", where, m.DefaultRole)
	}
	for i, r := range m.Roles {
		if r.Group == "" || !r.Role.Valid() || r.Role == controlplane.RoleAgent {
			return fmt.Errorf("%s.group_roles[%d] needs a group and a role admin, operator, user or viewer", where, i)
		}
	}
	for i, r := range m.Tenants {
		if r.Group == "" || controlplane.ValidTenantName("tenant", r.Tenant) != nil || (r.Role != "" && !r.Role.Valid()) {
			return fmt.Errorf("%s.group_tenants[%d] needs a group, a tenant name and a role tenant-admin, member or viewer", where, i)
		}
	}
	return nil
}

func hasGroup(groups []string, g string) bool {
	for _, x := range groups {
		if strings.EqualFold(x, g) {
			return true
		}
	}
	return false
}

// Role is the highest role a rule grants to groups, else DefaultRole.
func (m Mapping) Role(groups []string) controlplane.Role {
	best := controlplane.Role("")
	for _, r := range m.Roles {
		if hasGroup(groups, r.Group) && rank[r.Role] > rank[best] {
			best = r.Role
		}
	}
	if best == "" {
		return m.DefaultRole
	}
	return best
}

var tenantRank = map[controlplane.TenantRole]int{controlplane.TenantViewerRole: 1, controlplane.TenantMemberRole: 2, controlplane.TenantAdminRole: 3}

// TenantRoles is the role in each tenant the rules grant to groups (the
// highest where several match); managed lists every tenant a rule names,
// whose membership the login therefore owns.
func (m Mapping) TenantRoles(groups []string) (want map[string]controlplane.TenantRole, managed []string) {
	want = map[string]controlplane.TenantRole{}
	seen := map[string]bool{}
	for _, r := range m.Tenants {
		if !seen[r.Tenant] {
			seen[r.Tenant] = true
			managed = append(managed, r.Tenant)
		}
		role := r.Role
		if role == "" {
			role = controlplane.TenantMemberRole
		}
		if hasGroup(groups, r.Group) && tenantRank[role] > tenantRank[want[r.Tenant]] {
			want[r.Tenant] = role
		}
	}
	sort.Strings(managed)
	return want, managed
}

// Stable codes of refused external logins (the console translates them).
const (
	CodeNoRole          = "sso_no_role"
	CodeAccountConflict = "sso_account_conflict"
	CodeDisabled        = "sso_account_disabled"
	CodeTenantMissing   = "sso_tenant_not_found"
	CodeBadUsername     = "sso_bad_username"
)

// usableUsername: an external account's name comes from a directory
// attribute or a claim; it may hold '@' (an e-mail or UPN), but never
// spaces or control characters, which would make it ambiguous in the
// audit log and the console.
func usableUsername(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for _, r := range name {
		if r <= ' ' || r == 0x7f || unicode.IsSpace(r) || unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// ExternalLogin signs in a person an external source vouched for: it
// creates their account on the first login, brings role, name, e-mail and
// the mapped tenant memberships up to date on every login, and refuses a
// person the source disabled, whom no rule grants a role, or whose
// username belongs to an account of another source (a local account is
// never taken over by a directory or provider).
func (s *Service) ExternalLogin(ctx context.Context, id *ExternalIdentity, m Mapping) (*Session, error) {
	u, err := s.provision(ctx, id, m)
	if err != nil {
		return nil, err
	}
	return s.startSession(ctx, u, "")
}

// provision is ExternalLogin without the session: the account created or
// brought up to date, or the refusal.
func (s *Service) provision(ctx context.Context, id *ExternalIdentity, m Mapping) (*controlplane.User, error) {
	if id.Username == "" || id.Source == "" || id.ExternalID == "" {
		return nil, fmt.Errorf("%w: the identity source did not name the user", controlplane.ErrUnauthenticated)
	}
	if !usableUsername(id.Username) {
		return nil, controlplane.Coded(controlplane.ErrForbidden, CodeBadUsername, []string{"username", id.Username},
			"the name %q from the identity source is not usable as a username (1–64 characters, no spaces); ask an administrator", id.Username)
	}
	u, err := s.store.GetUserByName(ctx, id.Username)
	if err != nil && !errors.Is(err, controlplane.ErrNotFound) {
		return nil, fmt.Errorf("load user: %w", err)
	}
	if u != nil && (u.AuthSource != id.Source || !sameExternalID(id.Source, u.ExternalID, id.ExternalID)) {
		return nil, controlplane.Coded(controlplane.ErrForbidden, CodeAccountConflict, []string{"username", id.Username},
			"the username %q belongs to another account here; ask an administrator", id.Username)
	}
	if id.Disabled {
		if u != nil && u.Status == controlplane.UserActive {
			if err := s.disableExternal(ctx, u); err != nil {
				return nil, err
			}
		}
		return nil, controlplane.Coded(controlplane.ErrForbidden, CodeDisabled, nil, "account is disabled in the directory")
	}
	role := m.Role(id.Groups)
	if role == "" {
		return nil, controlplane.Coded(controlplane.ErrForbidden, CodeNoRole, nil, "no group of yours is granted access to HeteroFlow; ask an administrator")
	}
	want, managed := m.TenantRoles(id.Groups)
	ts, _ := s.store.(controlplane.TenantStore)
	if ts == nil && len(managed) > 0 {
		return nil, fmt.Errorf("sign-in mapping names tenants but the store keeps none")
	}
	for _, t := range managed {
		if _, err := ts.GetTenant(ctx, t); err != nil {
			if errors.Is(err, controlplane.ErrNotFound) {
				s.log.Error("sign-in mapping names a tenant that does not exist", "tenant", t, "source", id.Source)
				return nil, controlplane.Coded(controlplane.ErrForbidden, CodeTenantMissing, []string{"tenant", t},
					"the tenant %q your groups map to does not exist; ask an administrator", t)
			}
			return nil, fmt.Errorf("load tenant %s: %w", t, err)
		}
	}
	if u == nil {
		u = &controlplane.User{Username: id.Username, DisplayName: id.DisplayName, Email: id.Email, Role: role,
			Status: controlplane.UserActive, AuthSource: id.Source, ExternalID: id.ExternalID, Tenant: firstTenant(want)}
		if err := s.store.CreateUser(ctx, u); err != nil {
			return nil, fmt.Errorf("create user %s from %s: %w", u.Username, id.Source, err)
		}
	} else {
		if u.Status != controlplane.UserActive {
			return nil, fmt.Errorf("%w: account is disabled", controlplane.ErrForbidden)
		}
		upd := controlplane.UserUpdate{}
		changed := false
		if u.Role != role {
			upd.Role, changed = &role, true
		}
		if id.DisplayName != "" && u.DisplayName != id.DisplayName {
			upd.DisplayName, changed = &id.DisplayName, true
		}
		if id.Email != "" && u.Email != id.Email {
			upd.Email, changed = &id.Email, true
		}
		if _, stays := want[u.Tenant]; u.Tenant != "" && !stays && contains(managed, u.Tenant) || u.Tenant == "" && len(want) > 0 {
			t := firstTenant(want)
			upd.Tenant, changed = &t, true
		}
		if changed {
			if u, err = s.store.UpdateUser(ctx, u.ID, upd); err != nil {
				return nil, fmt.Errorf("update user %s from %s: %w", id.Username, id.Source, err)
			}
			s.ForgetOwner(u.ID)
		}
	}
	if len(managed) > 0 {
		changed, err := syncMemberships(ctx, ts, u.ID, want, managed)
		if changed {
			s.ForgetOwner(u.ID)
		}
		if err != nil {
			return nil, err
		}
	}
	return u, nil
}

// syncMemberships gives userID the wanted role in each managed tenant and
// removes it from managed tenants no rule grants; tenants no rule names
// are an administrator's to manage and stay as they are. changed says
// whether it wrote anything (even when a later write failed).
func syncMemberships(ctx context.Context, ts controlplane.TenantStore, userID int64, want map[string]controlplane.TenantRole, managed []string) (changed bool, err error) {
	have, err := ts.ListMemberships(ctx, userID)
	if err != nil {
		return false, fmt.Errorf("load memberships: %w", err)
	}
	for _, t := range managed {
		cur := controlplane.MembershipIn(have, t)
		role, wanted := want[t]
		switch {
		case wanted && (cur == nil || cur.Role != role):
			changed = true
			if _, err := ts.PutMember(ctx, t, userID, role); err != nil {
				return changed, fmt.Errorf("add to tenant %s: %w", t, err)
			}
		case !wanted && cur != nil:
			changed = true
			if err := ts.RemoveMember(ctx, t, userID); err != nil && !errors.Is(err, controlplane.ErrNotFound) {
				return changed, fmt.Errorf("remove from tenant %s: %w", t, err)
			}
		}
	}
	return changed, nil
}

// disableExternal marks an account the directory disabled and ends its
// sessions, so a refresh token issued before cannot outlive the directory's word.
func (s *Service) disableExternal(ctx context.Context, u *controlplane.User) error {
	st := controlplane.UserDisabled
	if _, err := s.store.UpdateUser(ctx, u.ID, controlplane.UserUpdate{Status: &st}); err != nil {
		return fmt.Errorf("disable user %s: %w", u.Username, err)
	}
	s.ForgetOwner(u.ID)
	if err := s.store.RevokeUserRefreshTokens(ctx, u.ID, s.cfg.Now()); err != nil {
		return fmt.Errorf("revoke sessions of %s: %w", u.Username, err)
	}
	s.log.Warn("account disabled in its directory; disabled here", "user", u.Username)
	return nil
}

// sameExternalID: LDAP DNs compare without case (the directory does); an
// OpenID subject is an exact string, and two that differ in case are two people.
func sameExternalID(source, a, b string) bool {
	if source == controlplane.AuthSourceLDAP {
		return strings.EqualFold(a, b)
	}
	return a == b
}

func firstTenant(want map[string]controlplane.TenantRole) string {
	names := make([]string, 0, len(want))
	for t := range want {
		names = append(names, t)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return ""
	}
	return names[0]
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
