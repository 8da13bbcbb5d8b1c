package auth

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
)

func TestMappingRolesAndTenants(t *testing.T) {
	m := Mapping{
		Roles: []GroupRole{{Group: "gpu-users", Role: controlplane.RoleUser}, {Group: "cn=ops,ou=groups,dc=example,dc=org", Role: controlplane.RoleOperator}},
		Tenants: []GroupTenant{{Group: "team-a", Tenant: "team-a"}, {Group: "team-a-leads", Tenant: "team-a", Role: controlplane.TenantAdminRole},
			{Group: "auditors", Tenant: "team-b", Role: controlplane.TenantViewerRole}},
	}
	// The highest matching role wins; groups match case-insensitively, by DN too.
	require.Equal(t, controlplane.RoleOperator, m.Role([]string{"GPU-Users", "CN=ops,ou=groups,dc=example,dc=org"}))
	require.Equal(t, controlplane.RoleUser, m.Role([]string{"gpu-users"}))
	require.Equal(t, controlplane.Role(""), m.Role([]string{"other"}), "no rule and no default: refused")
	m.DefaultRole = controlplane.RoleViewer
	require.Equal(t, controlplane.RoleViewer, m.Role(nil))

	want, managed := m.TenantRoles([]string{"team-a", "team-a-leads"})
	require.Equal(t, map[string]controlplane.TenantRole{"team-a": controlplane.TenantAdminRole}, want, "the higher tenant role of two rules")
	require.Equal(t, []string{"team-a", "team-b"}, managed, "every tenant a rule names is kept in sync, matched or not")
	want, _ = m.TenantRoles([]string{"auditors"})
	require.Equal(t, map[string]controlplane.TenantRole{"team-b": controlplane.TenantViewerRole}, want)

	require.NoError(t, m.Validate("auth.ldap"))
	require.Error(t, Mapping{DefaultRole: controlplane.RoleAgent}.Validate("x"))
	require.Error(t, Mapping{Tenants: []GroupTenant{{Group: "g", Tenant: "bad name"}}}.Validate("x"))
}

func TestSameExternalID(t *testing.T) {
	require.True(t, sameExternalID(controlplane.AuthSourceLDAP, "uid=Alice,ou=People,dc=example,dc=org", "uid=alice,ou=people,dc=example,dc=org"))
	require.True(t, sameExternalID("oidc:corp", "248289761001", "248289761001"))
	require.False(t, sameExternalID("oidc:corp", "AbC", "abc"), "subjects differing in case are different people")
}

func TestUsableUsername(t *testing.T) {
	for _, ok := range []string{"alice", "alice@example.org", "li.wei", "张伟"} {
		require.True(t, usableUsername(ok), ok)
	}
	for _, bad := range []string{"", "two words", "tab\there", "nl\n", strings.Repeat("x", 65)} {
		require.False(t, usableUsername(bad), "%q", bad)
	}
}
