package storetest

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
)

func testListUsers(t *testing.T, open Opener) {
	s := open(t)
	roles := []controlplane.Role{controlplane.RoleAdmin, controlplane.RoleUser, controlplane.RoleUser, controlplane.RoleViewer, controlplane.RoleUser}
	var ids []int64
	for i, r := range roles {
		u := &controlplane.User{Username: fmt.Sprintf("user%d", i), Role: r, Email: fmt.Sprintf("u%d@Example.com", i)}
		if i == 3 {
			u.Status = controlplane.UserPending
			u.DisplayName = "王小明 50%_off"
		}
		require.NoError(t, s.CreateUser(ctx(t), u))
		ids = append(ids, u.ID)
	}
	userIDs := func(us []*controlplane.User) []int64 {
		var out []int64
		for _, u := range us {
			out = append(out, u.ID)
		}
		return out
	}
	cases := []struct {
		name  string
		f     controlplane.UserFilter
		want  []int64
		total int
	}{
		{"all ordered by id", controlplane.UserFilter{}, ids, 5},
		{"role", controlplane.UserFilter{Role: controlplane.RoleUser}, []int64{ids[1], ids[2], ids[4]}, 3},
		{"status", controlplane.UserFilter{Status: controlplane.UserPending}, []int64{ids[3]}, 1},
		{"query username", controlplane.UserFilter{Query: "USER2"}, []int64{ids[2]}, 1},
		{"query email case-insensitive", controlplane.UserFilter{Query: "u4@example"}, []int64{ids[4]}, 1},
		{"query display name unicode", controlplane.UserFilter{Query: "小明"}, []int64{ids[3]}, 1},
		{"percent is literal", controlplane.UserFilter{Query: "50%_"}, []int64{ids[3]}, 1},
		{"underscore is literal", controlplane.UserFilter{Query: "r_"}, nil, 0},
		{"page 2", controlplane.UserFilter{Page: controlplane.Page{Limit: 2, Offset: 2}}, ids[2:4], 5},
		{"last partial page", controlplane.UserFilter{Page: controlplane.Page{Limit: 2, Offset: 4}}, ids[4:], 5},
		{"offset past end", controlplane.UserFilter{Page: controlplane.Page{Limit: 2, Offset: 10}}, nil, 5},
		{"negative offset clamps", controlplane.UserFilter{Page: controlplane.Page{Limit: 1, Offset: -3}}, ids[:1], 5},
		{"combined role+query", controlplane.UserFilter{Role: controlplane.RoleUser, Query: "user1"}, []int64{ids[1]}, 1},
		{"no match", controlplane.UserFilter{Role: controlplane.RoleAgent}, nil, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, total, err := s.ListUsers(ctx(t), c.f)
			require.NoError(t, err)
			require.Equal(t, c.total, total)
			require.NotNil(t, got, "lists are never nil")
			requireIDs(t, c.want, userIDs(got))
		})
	}
}
