package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
)

func testAPIKeys(t *testing.T, open Opener) {
	t.Run("CreateGet", func(t *testing.T) {
		s := open(t)
		u := mkUser(t, s, "alice", controlplane.RoleAdmin)
		exp := time.Now().Add(24 * time.Hour)
		k := &controlplane.APIKey{Name: "agent node-1 节点", Prefix: "hf_abc123", SecretHash: "sha",
			Role: controlplane.RoleAgent, OwnerID: u.ID, NodeID: "node-1", ExpiresAt: &exp}
		require.NoError(t, s.CreateAPIKey(ctx(t), k))
		require.NotZero(t, k.ID)
		got, err := s.GetAPIKeyByPrefix(ctx(t), "hf_abc123")
		require.NoError(t, err)
		require.Equal(t, k, got)

		system := &controlplane.APIKey{Name: "system", Prefix: "hf_sys", SecretHash: "s", Role: controlplane.RoleAgent}
		require.NoError(t, s.CreateAPIKey(ctx(t), system), "owner 0 is a system key")
		got, err = s.GetAPIKeyByPrefix(ctx(t), "hf_sys")
		require.NoError(t, err)
		require.Zero(t, got.OwnerID)

		cases := []struct {
			name string
			k    controlplane.APIKey
			want error
		}{
			{"duplicate prefix", controlplane.APIKey{Name: "n", Prefix: "hf_abc123", SecretHash: "s", Role: controlplane.RoleUser}, controlplane.ErrConflict},
			{"missing owner", controlplane.APIKey{Name: "n", Prefix: "hf_x", SecretHash: "s", Role: controlplane.RoleUser, OwnerID: 999999}, controlplane.ErrNotFound},
			{"bad role", controlplane.APIKey{Name: "n", Prefix: "hf_y", SecretHash: "s", Role: "root"}, controlplane.ErrInvalid},
			{"no prefix", controlplane.APIKey{Name: "n", SecretHash: "s", Role: controlplane.RoleUser}, controlplane.ErrInvalid},
			{"no hash", controlplane.APIKey{Name: "n", Prefix: "hf_z", Role: controlplane.RoleUser}, controlplane.ErrInvalid},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				require.ErrorIs(t, s.CreateAPIKey(ctx(t), &c.k), c.want)
			})
		}
		_, err = s.GetAPIKeyByPrefix(ctx(t), "hf_missing")
		require.ErrorIs(t, err, controlplane.ErrNotFound)
	})
	t.Run("ListRevokeTouch", func(t *testing.T) {
		s := open(t)
		a := mkUser(t, s, "a", controlplane.RoleUser)
		b := mkUser(t, s, "b", controlplane.RoleUser)
		var aKeys []int64
		for i := range 5 {
			owner := a.ID
			if i%2 == 1 {
				owner = b.ID
			}
			k := &controlplane.APIKey{Name: fmt.Sprintf("k%d", i), Prefix: fmt.Sprintf("hf_%d", i), SecretHash: "s",
				Role: controlplane.RoleUser, OwnerID: owner}
			require.NoError(t, s.CreateAPIKey(ctx(t), k))
			if owner == a.ID {
				aKeys = append([]int64{k.ID}, aKeys...) // newest first
			}
		}
		keyIDs := func(ks []*controlplane.APIKey) []int64 {
			var out []int64
			for _, k := range ks {
				out = append(out, k.ID)
			}
			return out
		}
		got, total, err := s.ListAPIKeys(ctx(t), a.ID, controlplane.Page{})
		require.NoError(t, err)
		require.Equal(t, 3, total)
		require.Equal(t, aKeys, keyIDs(got))
		got, total, err = s.ListAPIKeys(ctx(t), 0, controlplane.Page{Limit: 2, Offset: 4})
		require.NoError(t, err)
		require.Equal(t, 5, total)
		require.Len(t, got, 1)
		got, total, err = s.ListAPIKeys(ctx(t), 999999, controlplane.Page{})
		require.NoError(t, err)
		require.Zero(t, total)
		require.Empty(t, got)

		first := time.Now().Add(-time.Hour)
		require.NoError(t, s.RevokeAPIKey(ctx(t), aKeys[0], first))
		require.NoError(t, s.RevokeAPIKey(ctx(t), aKeys[0], time.Now()), "revoking twice is fine")
		k, err := s.GetAPIKeyByPrefix(ctx(t), "hf_4")
		require.NoError(t, err)
		require.NotNil(t, k.RevokedAt)
		require.WithinDuration(t, first, *k.RevokedAt, time.Microsecond, "the first revocation time is kept")
		require.ErrorIs(t, s.RevokeAPIKey(ctx(t), 999999, time.Now()), controlplane.ErrNotFound)

		used := time.Now()
		require.NoError(t, s.TouchAPIKey(ctx(t), aKeys[1], used))
		k, err = s.GetAPIKeyByPrefix(ctx(t), "hf_2")
		require.NoError(t, err)
		require.NotNil(t, k.LastUsedAt)
		require.WithinDuration(t, used, *k.LastUsedAt, time.Microsecond)
		require.ErrorIs(t, s.TouchAPIKey(ctx(t), 999999, time.Now()), controlplane.ErrNotFound)
	})
}
