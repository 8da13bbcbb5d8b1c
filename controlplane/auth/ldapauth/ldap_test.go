package ldapauth_test

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/auth"
	"github.com/heteroflow/heteroflow/controlplane/auth/ldapauth"
	"github.com/heteroflow/heteroflow/controlplane/auth/ldapauth/ldaptest"
	"github.com/heteroflow/heteroflow/controlplane/sqlite"
)

// seed: a service account, four people and three groups. carol is
// disabled by the attribute the disabled_filter below reads.
const seed = `dn: ou=people,dc=example,dc=org
objectClass: organizationalUnit
ou: people

dn: ou=groups,dc=example,dc=org
objectClass: organizationalUnit
ou: groups

dn: uid=hf-reader,ou=people,dc=example,dc=org
objectClass: inetOrgPerson
uid: hf-reader
cn: HeteroFlow reader
sn: reader
userPassword: reader-secret

dn: uid=alice,ou=people,dc=example,dc=org
objectClass: inetOrgPerson
uid: alice
cn: Alice Liddell
sn: Liddell
mail: alice@example.org
userPassword: alice-pass

dn: uid=bob,ou=people,dc=example,dc=org
objectClass: inetOrgPerson
uid: bob
cn: Bob Builder
sn: Builder
userPassword: bob-pass

dn: uid=carol,ou=people,dc=example,dc=org
objectClass: inetOrgPerson
uid: carol
cn: Carol
sn: C
employeeType: disabled
userPassword: carol-pass

dn: uid=nogroup,ou=people,dc=example,dc=org
objectClass: inetOrgPerson
uid: nogroup
cn: No Group
sn: G
userPassword: nogroup-pass

dn: cn=hf-admins,ou=groups,dc=example,dc=org
objectClass: groupOfNames
cn: hf-admins
member: uid=alice,ou=people,dc=example,dc=org

dn: cn=team-a,ou=groups,dc=example,dc=org
objectClass: groupOfNames
cn: team-a
member: uid=alice,ou=people,dc=example,dc=org
member: uid=bob,ou=people,dc=example,dc=org
member: uid=carol,ou=people,dc=example,dc=org

dn: cn=team-b-admins,ou=groups,dc=example,dc=org
objectClass: groupOfNames
cn: team-b-admins
member: uid=hf-reader,ou=people,dc=example,dc=org
`

func config(srv *ldaptest.Server) ldapauth.Config {
	return ldapauth.Config{
		URLs: []string{srv.URL}, StartTLS: true, CAFile: srv.CAFile,
		BindDN: "uid=hf-reader,ou=people,dc=example,dc=org", BindPassword: "reader-secret",
		UserBase: "ou=people,dc=example,dc=org", GroupBase: "ou=groups,dc=example,dc=org",
		DisabledFilter: "(employeeType=disabled)",
		Mapping: auth.Mapping{
			Roles: []auth.GroupRole{{Group: "hf-admins", Role: controlplane.RoleAdmin}, {Group: "cn=team-a,ou=groups,dc=example,dc=org", Role: controlplane.RoleUser}},
			Tenants: []auth.GroupTenant{{Group: "team-a", Tenant: "team-a"},
				{Group: "team-b-admins", Tenant: "team-b", Role: controlplane.TenantAdminRole}},
		},
	}
}

type fixture struct {
	store *sqlite.DB
	svc   *auth.Service
}

func newFixture(t *testing.T, cfg ldapauth.Config) *fixture {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "hf.db"), sqlite.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	for _, name := range []string{"team-a", "team-b"} {
		require.NoError(t, st.CreateTenant(ctx, &controlplane.Tenant{Name: name}))
	}
	dir, err := ldapauth.New(cfg, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	svc, err := auth.New(st, auth.Config{SigningKey: []byte("0123456789abcdef0123456789abcdef"), Directory: dir,
		Argon2: auth.Argon2Params{Memory: 64, Time: 1, Threads: 1}, LoginLimit: 1000}, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	return &fixture{store: st, svc: svc}
}

func (f *fixture) memberships(t *testing.T, userID int64) map[string]controlplane.TenantRole {
	ms, err := f.store.ListMemberships(context.Background(), userID)
	require.NoError(t, err)
	out := map[string]controlplane.TenantRole{}
	for _, m := range ms {
		out[m.Tenant] = m.Role
	}
	return out
}

func codeOf(err error) string {
	var ce *controlplane.CodedError
	if errors.As(err, &ce) {
		return ce.Code
	}
	return ""
}

func TestLDAPLogin(t *testing.T) {
	srv := ldaptest.Start(t, seed)
	f := newFixture(t, config(srv))
	ctx := context.Background()

	t.Run("first login creates the account from the directory over StartTLS", func(t *testing.T) {
		s, err := f.svc.Login(ctx, "alice", "alice-pass", "10.0.0.1")
		require.NoError(t, err)
		u := s.User
		require.Equal(t, controlplane.AuthSourceLDAP, u.AuthSource)
		require.Equal(t, "uid=alice,ou=people,dc=example,dc=org", u.ExternalID)
		require.Equal(t, controlplane.RoleAdmin, u.Role, "hf-admins maps to admin, the highest of her groups")
		require.Equal(t, "Alice Liddell", u.DisplayName)
		require.Equal(t, "alice@example.org", u.Email)
		require.Empty(t, u.PasswordHash, "an LDAP account has no local password")
		require.Equal(t, "team-a", u.Tenant)
		require.Equal(t, map[string]controlplane.TenantRole{"team-a": controlplane.TenantMemberRole}, f.memberships(t, u.ID))
		p, err := f.svc.Authenticate(ctx, s.AccessToken, "10.0.0.1")
		require.NoError(t, err)
		require.Equal(t, controlplane.RoleAdmin, p.Role)
	})

	t.Run("wrong password, unknown user and an injected filter are one refusal", func(t *testing.T) {
		for _, c := range []struct{ user, pass string }{
			{"alice", "wrong"}, {"nobody", "alice-pass"},
			// Unescaped, (uid=alic*) would find alice and her password would open it.
			{"alic*", "alice-pass"}, {"*", "alice-pass"}, {"alice)(uid=*", "alice-pass"}, {"alice", ""},
		} {
			_, err := f.svc.Login(ctx, c.user, c.pass, "10.0.2."+c.user) // one address each: failures back an address off
			require.ErrorIs(t, err, controlplane.ErrUnauthenticated, "%q", c.user)
			require.Empty(t, codeOf(err))
		}
		_, err := f.store.GetUserByName(ctx, "alic*")
		require.ErrorIs(t, err, controlplane.ErrNotFound)
	})

	t.Run("group changes apply at the next login", func(t *testing.T) {
		s, err := f.svc.Login(ctx, "bob", "bob-pass", "10.0.0.3")
		require.NoError(t, err)
		require.Equal(t, controlplane.RoleUser, s.User.Role)
		require.Equal(t, map[string]controlplane.TenantRole{"team-a": controlplane.TenantMemberRole}, f.memberships(t, s.User.ID))

		srv.Apply("modify", `dn: cn=team-a,ou=groups,dc=example,dc=org
changetype: modify
delete: member
member: uid=bob,ou=people,dc=example,dc=org

dn: cn=team-b-admins,ou=groups,dc=example,dc=org
changetype: modify
add: member
member: uid=bob,ou=people,dc=example,dc=org

dn: cn=hf-admins,ou=groups,dc=example,dc=org
changetype: modify
add: member
member: uid=bob,ou=people,dc=example,dc=org
`)
		s, err = f.svc.Login(ctx, "bob", "bob-pass", "10.0.0.3")
		require.NoError(t, err)
		require.Equal(t, controlplane.RoleAdmin, s.User.Role)
		require.Equal(t, map[string]controlplane.TenantRole{"team-b": controlplane.TenantAdminRole}, f.memberships(t, s.User.ID),
			"left team-a, tenant admin of team-b")
		require.Equal(t, "team-b", s.User.Tenant, "the current tenant follows the memberships")
	})

	t.Run("a user no group grants a role is refused", func(t *testing.T) {
		_, err := f.svc.Login(ctx, "nogroup", "nogroup-pass", "10.0.0.4")
		require.ErrorIs(t, err, controlplane.ErrForbidden)
		require.Equal(t, auth.CodeNoRole, codeOf(err))
	})

	t.Run("disabled in the directory: refused, disabled here, sessions end", func(t *testing.T) {
		_, err := f.svc.Login(ctx, "carol", "carol-pass", "10.0.0.5")
		require.ErrorIs(t, err, controlplane.ErrForbidden)
		require.Equal(t, auth.CodeDisabled, codeOf(err))
		_, err = f.svc.Login(ctx, "carol", "wrong", "10.0.0.5")
		require.ErrorIs(t, err, controlplane.ErrUnauthenticated, "the disabled state is told only to who knows the password")

		s, err := f.svc.Login(ctx, "alice", "alice-pass", "10.0.0.5")
		require.NoError(t, err)
		srv.Apply("modify", "dn: uid=alice,ou=people,dc=example,dc=org\nchangetype: modify\nadd: employeeType\nemployeeType: disabled\n")
		_, err = f.svc.Login(ctx, "alice", "alice-pass", "10.0.0.5")
		require.Equal(t, auth.CodeDisabled, codeOf(err))
		u, err := f.store.GetUserByName(ctx, "alice")
		require.NoError(t, err)
		require.Equal(t, controlplane.UserDisabled, u.Status)
		_, err = f.svc.Refresh(ctx, s.RefreshToken)
		require.ErrorIs(t, err, controlplane.ErrUnauthenticated, "her refresh token died with the account")
	})

	t.Run("removed from the directory: refused and disabled here", func(t *testing.T) {
		s, err := f.svc.Login(ctx, "bob", "bob-pass", "10.0.0.6")
		require.NoError(t, err)
		cmd := "dn: uid=bob,ou=people,dc=example,dc=org\nchangetype: delete\n"
		srv.Apply("modify", cmd)
		_, err = f.svc.Login(ctx, "bob", "bob-pass", "10.0.0.6")
		require.ErrorIs(t, err, controlplane.ErrUnauthenticated)
		u, err := f.store.GetUser(ctx, s.User.ID)
		require.NoError(t, err)
		require.Equal(t, controlplane.UserDisabled, u.Status)
	})

	t.Run("an LDAP account never opens with a local password", func(t *testing.T) {
		// Even if a hash were planted on the account, the password path
		// answers for the directory, which refuses this password.
		hash, err := f.svc.NewPasswordHash("Local-Passw0rd!x", "dave")
		require.NoError(t, err)
		require.NoError(t, f.store.CreateUser(ctx, &controlplane.User{Username: "dave", Role: controlplane.RoleAdmin, Status: controlplane.UserActive,
			AuthSource: controlplane.AuthSourceLDAP, ExternalID: "uid=dave,ou=people,dc=example,dc=org", PasswordHash: hash}))
		_, err = f.svc.Login(ctx, "dave", "Local-Passw0rd!x", "10.0.0.7")
		require.ErrorIs(t, err, controlplane.ErrUnauthenticated)
		// A local account of the same server still signs in with its password.
		require.NoError(t, f.store.CreateUser(ctx, &controlplane.User{Username: "erin", Role: controlplane.RoleViewer, Status: controlplane.UserActive, PasswordHash: hash}))
		_, err = f.svc.Login(ctx, "erin", "Local-Passw0rd!x", "10.0.0.7")
		require.NoError(t, err)
	})

	t.Run("a local account is never taken over by a directory entry of its name", func(t *testing.T) {
		hash, err := f.svc.NewPasswordHash("Other-Passw0rd!x", "zed")
		require.NoError(t, err)
		require.NoError(t, f.store.CreateUser(ctx, &controlplane.User{Username: "hf-reader", Role: controlplane.RoleViewer, Status: controlplane.UserActive, PasswordHash: hash}))
		_, err = f.svc.Login(ctx, "hf-reader", "reader-secret", "10.0.0.8")
		require.ErrorIs(t, err, controlplane.ErrUnauthenticated, "the local account answers with its own password")
	})

	t.Run("a mapped tenant that does not exist fails the login closed", func(t *testing.T) {
		cfg := config(srv)
		cfg.Tenants = append(cfg.Tenants, auth.GroupTenant{Group: "nothing", Tenant: "ghost"})
		g := newFixture(t, cfg)
		srv.Apply("add", "dn: uid=frank,ou=people,dc=example,dc=org\nobjectClass: inetOrgPerson\nuid: frank\ncn: Frank\nsn: F\nuserPassword: frank-pass\n\n"+
			"dn: cn=frank-admins,ou=groups,dc=example,dc=org\nobjectClass: groupOfNames\ncn: frank-admins\nmember: uid=frank,ou=people,dc=example,dc=org\n")
		cfg.DefaultRole = controlplane.RoleViewer
		_, err := g.svc.Login(ctx, "frank", "frank-pass", "10.0.0.9")
		require.Equal(t, auth.CodeNoRole, codeOf(err))
		g = newFixture(t, cfg)
		_, err = g.svc.Login(ctx, "frank", "frank-pass", "10.0.0.9")
		require.ErrorIs(t, err, controlplane.ErrForbidden)
		require.Equal(t, auth.CodeTenantMissing, codeOf(err))
		_, err = g.store.GetUserByName(ctx, "frank")
		require.ErrorIs(t, err, controlplane.ErrNotFound, "nothing is created by a refused login")
	})

	t.Run("wrong service credentials fail closed with their code", func(t *testing.T) {
		cfg := config(srv)
		cfg.BindPassword = "not-the-secret"
		g := newFixture(t, cfg)
		_, err := g.svc.Login(ctx, "frank", "frank-pass", "10.0.0.10")
		require.ErrorIs(t, err, controlplane.ErrUnavailable)
		require.Equal(t, ldapauth.CodeServiceBind, codeOf(err))
	})

	t.Run("a certificate from another CA is refused by StartTLS", func(t *testing.T) {
		other := ldaptest.Start(t, "")
		cfg := config(srv)
		cfg.CAFile = other.CAFile
		g := newFixture(t, cfg)
		_, err := g.svc.Login(ctx, "frank", "frank-pass", "10.0.0.11")
		require.ErrorIs(t, err, controlplane.ErrUnavailable)
		require.Equal(t, ldapauth.CodeUnavailable, codeOf(err))
	})

	var liveRefresh string
	t.Run("a session refresh re-reads the directory", func(t *testing.T) {
		srv.Apply("add", "dn: uid=gina,ou=people,dc=example,dc=org\nobjectClass: inetOrgPerson\nuid: gina\ncn: Gina\nsn: G\nuserPassword: gina-pass\n\n"+
			"dn: uid=hank,ou=people,dc=example,dc=org\nobjectClass: inetOrgPerson\nuid: hank\ncn: Hank\nsn: H\nuserPassword: hank-pass\n")
		srv.Apply("modify", "dn: cn=team-a,ou=groups,dc=example,dc=org\nchangetype: modify\nadd: member\nmember: uid=gina,ou=people,dc=example,dc=org\nmember: uid=hank,ou=people,dc=example,dc=org\n")
		s, err := f.svc.Login(ctx, "gina", "gina-pass", "10.0.0.13")
		require.NoError(t, err)
		require.Equal(t, controlplane.RoleUser, s.User.Role)
		h, err := f.svc.Login(ctx, "hank", "hank-pass", "10.0.0.13")
		require.NoError(t, err)
		liveRefresh = h.RefreshToken

		srv.Apply("modify", "dn: cn=hf-admins,ou=groups,dc=example,dc=org\nchangetype: modify\nadd: member\nmember: uid=gina,ou=people,dc=example,dc=org\n")
		s, err = f.svc.Refresh(ctx, s.RefreshToken)
		require.NoError(t, err)
		require.Equal(t, controlplane.RoleAdmin, s.User.Role, "the new group applies at the refresh")
		p, err := f.svc.Authenticate(ctx, s.AccessToken, "10.0.0.13")
		require.NoError(t, err)
		require.Equal(t, controlplane.RoleAdmin, p.Role, "and the new access token carries it")

		srv.Apply("modify", "dn: uid=gina,ou=people,dc=example,dc=org\nchangetype: modify\nadd: employeeType\nemployeeType: disabled\n")
		_, err = f.svc.Refresh(ctx, s.RefreshToken)
		require.ErrorIs(t, err, controlplane.ErrForbidden)
		require.Equal(t, auth.CodeDisabled, codeOf(err))
		u, err := f.store.GetUserByName(ctx, "gina")
		require.NoError(t, err)
		require.Equal(t, controlplane.UserDisabled, u.Status)
	})

	t.Run("directory down: refused with its code, no fallback", func(t *testing.T) {
		srv.Stop()
		_, err := f.svc.Refresh(ctx, liveRefresh)
		require.Equal(t, ldapauth.CodeUnavailable, codeOf(err), "a refresh fails closed too")
		_, err = f.svc.Login(ctx, "alice", "alice-pass", "10.0.0.12")
		require.ErrorIs(t, err, controlplane.ErrUnavailable)
		require.Equal(t, ldapauth.CodeUnavailable, codeOf(err))
		_, err = f.svc.Login(ctx, "newcomer", "whatever", "10.0.0.12")
		require.Equal(t, ldapauth.CodeUnavailable, codeOf(err))
	})
}

// TestLDAPSearchMissNeverDisablesAnAccount: people sign in by e-mail
// (user_filter on mail) and their accounts are named by uid, so typing an
// account's HeteroFlow name finds no entry. Anyone can type a name: that
// miss is a refused login, never "removed from the directory" — only an
// account whose own entry is gone is disabled.
func TestLDAPSearchMissNeverDisablesAnAccount(t *testing.T) {
	srv := ldaptest.Start(t, seed)
	cfg := config(srv)
	cfg.UserFilter = "(mail={username})"
	f := newFixture(t, cfg)
	ctx := context.Background()

	s, err := f.svc.Login(ctx, "alice@example.org", "alice-pass", "10.1.0.1")
	require.NoError(t, err)
	require.Equal(t, "alice", s.User.Username)

	_, err = f.svc.Login(ctx, "alice", "a-guess", "10.1.0.2")
	require.ErrorIs(t, err, controlplane.ErrUnauthenticated)
	u, err := f.store.GetUser(ctx, s.User.ID)
	require.NoError(t, err)
	require.Equal(t, controlplane.UserActive, u.Status, "a stranger typing her name disabled her account")
	_, err = f.svc.Refresh(ctx, s.RefreshToken)
	require.NoError(t, err, "her session lives on")
	_, err = f.svc.Login(ctx, "alice@example.org", "alice-pass", "10.1.0.1")
	require.NoError(t, err)

	// Her entry removed for real: the next attempt in her name disables the account.
	srv.Apply("modify", "dn: uid=alice,ou=people,dc=example,dc=org\nchangetype: delete\n")
	_, err = f.svc.Login(ctx, "alice", "a-guess", "10.1.0.3")
	require.ErrorIs(t, err, controlplane.ErrUnauthenticated)
	u, err = f.store.GetUser(ctx, s.User.ID)
	require.NoError(t, err)
	require.Equal(t, controlplane.UserDisabled, u.Status)
}

// TestLDAPSAndMemberOf: an ldaps:// URL (TLS from the first byte, verified
// against the CA file) and groups read from the user's memberOf attribute
// (OpenLDAP's memberof overlay keeps it) instead of a group search.
func TestLDAPSAndMemberOf(t *testing.T) {
	srv := ldaptest.Start(t, seed)
	cfg := config(srv)
	cfg.URLs, cfg.StartTLS = []string{srv.LDAPSURL}, false
	cfg.GroupBase, cfg.MemberOfAttr = "", "memberOf"
	f := newFixture(t, cfg)
	s, err := f.svc.Login(context.Background(), "alice", "alice-pass", "10.1.0.1")
	require.NoError(t, err)
	require.Equal(t, controlplane.RoleAdmin, s.User.Role, "hf-admins from memberOf (the group's cn)")
	require.Equal(t, map[string]controlplane.TenantRole{"team-a": controlplane.TenantMemberRole}, f.memberships(t, s.User.ID))
	s, err = f.svc.Login(context.Background(), "bob", "bob-pass", "10.1.0.1")
	require.NoError(t, err)
	require.Equal(t, controlplane.RoleUser, s.User.Role, "team-a by its full DN from memberOf")

	other := ldaptest.Start(t, "")
	cfg.CAFile = other.CAFile
	g := newFixture(t, cfg)
	_, err = g.svc.Login(context.Background(), "alice", "alice-pass", "10.1.0.2")
	require.Equal(t, ldapauth.CodeUnavailable, codeOf(err), "an ldaps certificate from another CA is refused")
}
