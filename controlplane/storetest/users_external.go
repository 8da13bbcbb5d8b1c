package storetest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
)

// testExternalUsers: an account created by an LDAP or OIDC login keeps its
// source and external id through reads, lists and updates, and a local
// account reads back with neither.
func testExternalUsers(t *testing.T, open Opener) {
	s := open(t)
	ext := &controlplane.User{Username: "ldap-alice", Role: controlplane.RoleUser, Status: controlplane.UserActive,
		AuthSource: controlplane.AuthSourceLDAP, ExternalID: "uid=alice,ou=people,dc=example,dc=org"}
	require.NoError(t, s.CreateUser(ctx(t), ext))
	got, err := s.GetUserByName(ctx(t), "ldap-alice")
	require.NoError(t, err)
	require.Equal(t, controlplane.AuthSourceLDAP, got.AuthSource)
	require.Equal(t, ext.ExternalID, got.ExternalID)
	require.Empty(t, got.PasswordHash)
	require.True(t, got.External())

	moved := "uid=alice,ou=staff,dc=example,dc=org"
	role := controlplane.RoleOperator
	got, err = s.UpdateUser(ctx(t), ext.ID, controlplane.UserUpdate{ExternalID: &moved, Role: &role})
	require.NoError(t, err)
	require.Equal(t, moved, got.ExternalID)
	require.Equal(t, controlplane.AuthSourceLDAP, got.AuthSource, "an update never changes the source")
	got, err = s.GetUser(ctx(t), ext.ID)
	require.NoError(t, err)
	require.Equal(t, moved, got.ExternalID)

	local := mkUser(t, s, "local-bob", controlplane.RoleViewer)
	got, err = s.GetUser(ctx(t), local.ID)
	require.NoError(t, err)
	require.False(t, got.External())
	require.Empty(t, got.ExternalID)
	list, _, err := s.ListUsers(ctx(t), controlplane.UserFilter{Query: "ldap-"})
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, controlplane.AuthSourceLDAP, list[0].AuthSource)
}
