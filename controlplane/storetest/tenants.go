package storetest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
)

// TenantStore is a store with tenant, project and membership persistence.
type TenantStore interface {
	controlplane.Store
	controlplane.TenantStore
}

// TenantOpener returns a fresh, empty TenantStore and registers its Close
// with t.Cleanup.
type TenantOpener func(t *testing.T) TenantStore

// RunTenants runs the conformance suite of controlplane.TenantStore.
func RunTenants(t *testing.T, open TenantOpener) {
	groups := []struct {
		name string
		run  func(t *testing.T, s TenantStore)
	}{
		{"Tenants", testTenantCRUD},
		{"Projects", testProjects},
		{"Members", testMembers},
		{"TaskScope", testTaskScope},
		{"APIKeyTenant", testAPIKeyTenant},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			g.run(t, open(t))
		})
	}
}

func testTenantCRUD(t *testing.T, s TenantStore) {
	c := ctx(t)
	acme := &controlplane.Tenant{Name: "acme", DisplayName: "Acme 公司", NodeSelector: map[string]string{"pool": "acme"}}
	require.NoError(t, s.CreateTenant(c, acme))
	require.NotZero(t, acme.ID)
	require.ErrorIs(t, s.CreateTenant(c, &controlplane.Tenant{Name: "acme"}), controlplane.ErrConflict)
	for _, bad := range []string{"", "has space", "a/b", "-lead", string(make([]byte, 65))} {
		require.ErrorIs(t, s.CreateTenant(c, &controlplane.Tenant{Name: bad}), controlplane.ErrInvalid, "%q", bad)
	}
	require.NoError(t, s.CreateTenant(c, &controlplane.Tenant{Name: "Beta"}))

	got, err := s.GetTenant(c, "acme")
	require.NoError(t, err)
	require.Equal(t, acme.DisplayName, got.DisplayName)
	require.Equal(t, map[string]string{"pool": "acme"}, got.NodeSelector)
	require.Equal(t, acme.CreatedAt, got.CreatedAt)
	_, err = s.GetTenant(c, "nope")
	require.ErrorIs(t, err, controlplane.ErrNotFound)

	all, err := s.ListTenants(c)
	require.NoError(t, err)
	require.Len(t, all, 2)
	require.Equal(t, "Beta", all[0].Name, "bytewise order: upper case first")

	name := Hostile[4]
	off := true
	empty := map[string]string{}
	up, err := s.UpdateTenant(c, "acme", controlplane.TenantUpdate{DisplayName: &name, Disabled: &off, NodeSelector: &empty})
	require.NoError(t, err)
	require.True(t, up.Disabled)
	require.Nil(t, up.NodeSelector)
	got, err = s.GetTenant(c, "acme")
	require.NoError(t, err)
	require.Equal(t, name, got.DisplayName)
	require.True(t, got.Disabled)
	require.Nil(t, got.NodeSelector)
	long := string(make([]byte, 129))
	_, err = s.UpdateTenant(c, "acme", controlplane.TenantUpdate{DisplayName: &long})
	require.ErrorIs(t, err, controlplane.ErrInvalid)
	_, err = s.UpdateTenant(c, "nope", controlplane.TenantUpdate{Disabled: &off})
	require.ErrorIs(t, err, controlplane.ErrNotFound)
}

func testProjects(t *testing.T, s TenantStore) {
	c := ctx(t)
	require.NoError(t, s.CreateTenant(c, &controlplane.Tenant{Name: "lab"}))
	require.NoError(t, s.CreateTenant(c, &controlplane.Tenant{Name: "other"}))
	p := &controlplane.Project{Tenant: "lab", Name: "vision", DisplayName: "视觉"}
	require.NoError(t, s.CreateProject(c, p))
	require.NotZero(t, p.ID)
	require.ErrorIs(t, s.CreateProject(c, &controlplane.Project{Tenant: "lab", Name: "vision"}), controlplane.ErrConflict)
	require.NoError(t, s.CreateProject(c, &controlplane.Project{Tenant: "other", Name: "vision"}), "names are per tenant")
	require.ErrorIs(t, s.CreateProject(c, &controlplane.Project{Tenant: "nope", Name: "x"}), controlplane.ErrNotFound)
	require.ErrorIs(t, s.CreateProject(c, &controlplane.Project{Tenant: "lab", Name: "bad name"}), controlplane.ErrInvalid)
	require.NoError(t, s.CreateProject(c, &controlplane.Project{Tenant: "lab", Name: "audio"}))

	list, err := s.ListProjects(c, "lab")
	require.NoError(t, err)
	require.Len(t, list, 2)
	require.Equal(t, []string{"audio", "vision"}, []string{list[0].Name, list[1].Name})
	require.Equal(t, "lab", list[1].Tenant)
	_, err = s.ListProjects(c, "nope")
	require.ErrorIs(t, err, controlplane.ErrNotFound)

	off, name := true, "Vision v2"
	up, err := s.UpdateProject(c, "lab", "vision", controlplane.ProjectUpdate{DisplayName: &name, Disabled: &off})
	require.NoError(t, err)
	require.Equal(t, name, up.DisplayName)
	got, err := s.GetProject(c, "lab", "vision")
	require.NoError(t, err)
	require.True(t, got.Disabled)
	other, err := s.GetProject(c, "other", "vision")
	require.NoError(t, err)
	require.False(t, other.Disabled, "the other tenant's project of the same name is untouched")
	_, err = s.UpdateProject(c, "lab", "nope", controlplane.ProjectUpdate{Disabled: &off})
	require.ErrorIs(t, err, controlplane.ErrNotFound)
}

func testMembers(t *testing.T, s TenantStore) {
	c := ctx(t)
	alice := mkUser(t, s, "alice", controlplane.RoleUser)
	bob := mkUser(t, s, "bob", controlplane.RoleViewer)
	for _, n := range []string{"acme", "globex"} {
		require.NoError(t, s.CreateTenant(c, &controlplane.Tenant{Name: n}))
	}
	m, err := s.PutMember(c, "acme", alice.ID, controlplane.TenantAdminRole)
	require.NoError(t, err)
	require.Equal(t, "alice", m.Username)
	require.Equal(t, controlplane.TenantAdminRole, m.Role)
	_, err = s.PutMember(c, "globex", alice.ID, controlplane.TenantMemberRole)
	require.NoError(t, err)
	_, err = s.PutMember(c, "acme", bob.ID, controlplane.TenantViewerRole)
	require.NoError(t, err)
	// Re-putting changes the role, it does not add a second row.
	m, err = s.PutMember(c, "acme", bob.ID, controlplane.TenantMemberRole)
	require.NoError(t, err)
	require.Equal(t, controlplane.TenantMemberRole, m.Role)

	_, err = s.PutMember(c, "acme", alice.ID, "owner")
	require.ErrorIs(t, err, controlplane.ErrInvalid)
	_, err = s.PutMember(c, "nope", alice.ID, controlplane.TenantMemberRole)
	require.ErrorIs(t, err, controlplane.ErrNotFound)
	_, err = s.PutMember(c, "acme", 999999, controlplane.TenantMemberRole)
	require.ErrorIs(t, err, controlplane.ErrNotFound)

	members, err := s.ListMembers(c, "acme")
	require.NoError(t, err)
	require.Len(t, members, 2)
	require.Equal(t, "alice", members[0].Username)
	require.Equal(t, controlplane.TenantMemberRole, members[1].Role)

	ms, err := s.ListMemberships(c, alice.ID)
	require.NoError(t, err)
	require.Len(t, ms, 2)
	require.Equal(t, "acme", ms[0].Tenant)
	require.Equal(t, controlplane.TenantAdminRole, ms[0].Role)
	require.Equal(t, "globex", ms[1].Tenant)

	off := true
	_, err = s.UpdateTenant(c, "globex", controlplane.TenantUpdate{Disabled: &off})
	require.NoError(t, err)
	ms, err = s.ListMemberships(c, alice.ID)
	require.NoError(t, err)
	require.True(t, ms[1].TenantDisabled, "a membership says when its tenant is disabled")

	require.NoError(t, s.RemoveMember(c, "acme", bob.ID))
	require.ErrorIs(t, s.RemoveMember(c, "acme", bob.ID), controlplane.ErrNotFound)
	ms, err = s.ListMemberships(c, bob.ID)
	require.NoError(t, err)
	require.Empty(t, ms)

	// Deleting a user removes their memberships.
	require.NoError(t, s.DeleteUser(c, alice.ID))
	members, err = s.ListMembers(c, "acme")
	require.NoError(t, err)
	require.Empty(t, members)
}

func testTaskScope(t *testing.T, s TenantStore) {
	c := ctx(t)
	me := mkUser(t, s, "scoped", controlplane.RoleUser)
	other := mkUser(t, s, "someone", controlplane.RoleUser)
	mine := mkTask(t, s, me.ID, nil)
	mineElsewhere := mkTask(t, s, me.ID, func(sp *controlplane.TaskSpec) { sp.Tenant = "globex" })
	acme := mkTask(t, s, other.ID, func(sp *controlplane.TaskSpec) { sp.Tenant = "acme" })
	beta := mkTask(t, s, other.ID, func(sp *controlplane.TaskSpec) { sp.Tenant = "beta" })
	_ = mkTask(t, s, other.ID, func(sp *controlplane.TaskSpec) { sp.Tenant = "globex" })
	_ = mkTask(t, s, other.ID, nil)

	cases := []struct {
		name  string
		scope controlplane.TaskScope
		extra func(*controlplane.TaskFilter)
		want  []int64
	}{
		{"own only", controlplane.TaskScope{OwnerID: me.ID}, nil, []int64{mineElsewhere.ID, mine.ID}},
		{"own and two tenants", controlplane.TaskScope{OwnerID: me.ID, Tenants: []string{"acme", "beta"}}, nil,
			[]int64{beta.ID, acme.ID, mineElsewhere.ID, mine.ID}},
		{"tenants only", controlplane.TaskScope{Tenants: []string{"acme"}}, nil, []int64{acme.ID}},
		{"nothing", controlplane.TaskScope{}, nil, nil},
		{"scope and tenant filter", controlplane.TaskScope{OwnerID: me.ID, Tenants: []string{"acme"}},
			func(f *controlplane.TaskFilter) { f.Tenant = "globex" }, []int64{mineElsewhere.ID}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sc := tc.scope
			f := controlplane.TaskFilter{Scope: &sc}
			if tc.extra != nil {
				tc.extra(&f)
			}
			got, total, err := s.ListTasks(c, f)
			require.NoError(t, err)
			require.Equal(t, len(tc.want), total)
			if tc.want == nil {
				require.Empty(t, got)
				return
			}
			require.Equal(t, tc.want, taskIDs(got))
		})
	}
}

func testAPIKeyTenant(t *testing.T, s TenantStore) {
	c := ctx(t)
	u := mkUser(t, s, "keyowner", controlplane.RoleUser)
	k := &controlplane.APIKey{Name: "scoped", Prefix: "scoped1", SecretHash: "h", Role: controlplane.RoleViewer, OwnerID: u.ID, Tenant: "acme"}
	require.NoError(t, s.CreateAPIKey(c, k))
	plain := &controlplane.APIKey{Name: "plain", Prefix: "plain1", SecretHash: "h", Role: controlplane.RoleViewer, OwnerID: u.ID}
	require.NoError(t, s.CreateAPIKey(c, plain))
	got, err := s.GetAPIKeyByPrefix(c, "scoped1")
	require.NoError(t, err)
	require.Equal(t, "acme", got.Tenant)
	got, err = s.GetAPIKeyByPrefix(c, "plain1")
	require.NoError(t, err)
	require.Empty(t, got.Tenant)
	list, _, err := s.ListAPIKeys(c, u.ID, controlplane.Page{Limit: 10})
	require.NoError(t, err)
	require.Len(t, list, 2)
	require.Equal(t, "plain", list[0].Name)
	require.Equal(t, "", list[0].Tenant)
	require.Equal(t, "acme", list[1].Tenant)
}
