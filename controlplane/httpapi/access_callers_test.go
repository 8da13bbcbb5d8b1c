package httpapi

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/auth"
)

// TestAccessCallers: ForAgents/ForPeople narrow a permission, and Allows
// (what route listings and the whole-server access test read) says the
// same as the enforced check.
func TestAccessCallers(t *testing.T) {
	nodesWrite := Perm(auth.ResNodes, auth.ActWrite) // admin, operator, agent
	for _, tc := range []struct {
		name string
		acc  Access
		str  string
		want map[controlplane.Role]bool
	}{
		{"any caller", nodesWrite, "nodes:write",
			map[controlplane.Role]bool{"admin": true, "operator": true, "user": false, "viewer": false, "agent": true}},
		{"agents only", nodesWrite.ForAgents(), "nodes:write (agents only)",
			map[controlplane.Role]bool{"admin": false, "operator": false, "user": false, "viewer": false, "agent": true}},
		{"people only", nodesWrite.ForPeople(), "nodes:write (not agents)",
			map[controlplane.Role]bool{"admin": true, "operator": true, "user": false, "viewer": false, "agent": false}},
		{"authenticated people", Access{Authenticated: true, Callers: PeopleOnly}, "authenticated",
			map[controlplane.Role]bool{"admin": true, "operator": true, "user": true, "viewer": true, "agent": false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.str, tc.acc.String())
			for role, want := range tc.want {
				require.Equal(t, want, tc.acc.Allows(role), "Allows(%s)", role)
				ctx := context.WithValue(context.Background(), keyPrincipal, &auth.Principal{Username: "u", Role: role})
				err := check(ctx, tc.acc)
				if want {
					require.NoError(t, err, role)
				} else {
					require.ErrorIs(t, err, controlplane.ErrForbidden, role)
				}
			}
			require.ErrorIs(t, check(context.Background(), tc.acc), controlplane.ErrUnauthenticated)
		})
	}
}
