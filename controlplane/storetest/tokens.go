package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
)

func testRefreshTokens(t *testing.T, open Opener) {
	newTok := func(userID int64, family, hash string) *controlplane.RefreshToken {
		return &controlplane.RefreshToken{UserID: userID, Family: family, TokenHash: hash, ExpiresAt: time.Now().Add(time.Hour)}
	}
	t.Run("CreateGet", func(t *testing.T) {
		s := open(t)
		u := mkUser(t, s, "alice", controlplane.RoleUser)
		tok := newTok(u.ID, "fam1", "hash1")
		require.NoError(t, s.CreateRefreshToken(ctx(t), tok))
		require.NotZero(t, tok.ID)
		got, err := s.GetRefreshTokenByHash(ctx(t), "hash1")
		require.NoError(t, err)
		require.Equal(t, tok, got)
		require.Nil(t, got.RotatedAt)
		require.Nil(t, got.RevokedAt)

		_, err = s.GetRefreshTokenByHash(ctx(t), "nope")
		require.ErrorIs(t, err, controlplane.ErrNotFound)
		require.ErrorIs(t, s.CreateRefreshToken(ctx(t), newTok(u.ID, "fam2", "hash1")), controlplane.ErrConflict)
		require.ErrorIs(t, s.CreateRefreshToken(ctx(t), newTok(999999, "fam3", "hash3")), controlplane.ErrNotFound)
		require.ErrorIs(t, s.CreateRefreshToken(ctx(t), newTok(u.ID, "fam4", "")), controlplane.ErrInvalid)
	})
	t.Run("Rotate", func(t *testing.T) {
		s := open(t)
		u := mkUser(t, s, "bob", controlplane.RoleUser)
		first := newTok(u.ID, "famA", "a1")
		require.NoError(t, s.CreateRefreshToken(ctx(t), first))
		second := &controlplane.RefreshToken{TokenHash: "a2", ExpiresAt: time.Now().Add(time.Hour)}
		require.NoError(t, s.RotateRefreshToken(ctx(t), first.ID, second))
		require.NotZero(t, second.ID)
		require.Equal(t, "famA", second.Family, "the successor joins the family")
		require.Equal(t, u.ID, second.UserID)

		old, err := s.GetRefreshTokenByHash(ctx(t), "a1")
		require.NoError(t, err)
		require.NotNil(t, old.RotatedAt)
		require.Equal(t, second.ID, old.ReplacedBy)

		// Reuse: presenting the rotated token again is a conflict.
		err = s.RotateRefreshToken(ctx(t), first.ID, &controlplane.RefreshToken{TokenHash: "a3", ExpiresAt: time.Now().Add(time.Hour)})
		require.ErrorIs(t, err, controlplane.ErrConflict)
		_, err = s.GetRefreshTokenByHash(ctx(t), "a3")
		require.ErrorIs(t, err, controlplane.ErrNotFound, "a failed rotation inserts nothing")

		err = s.RotateRefreshToken(ctx(t), 999999, &controlplane.RefreshToken{TokenHash: "a4", ExpiresAt: time.Now().Add(time.Hour)})
		require.ErrorIs(t, err, controlplane.ErrNotFound)
		err = s.RotateRefreshToken(ctx(t), second.ID, &controlplane.RefreshToken{Family: "other", TokenHash: "a5", ExpiresAt: time.Now().Add(time.Hour)})
		require.ErrorIs(t, err, controlplane.ErrInvalid)
		err = s.RotateRefreshToken(ctx(t), second.ID, &controlplane.RefreshToken{TokenHash: "a1", ExpiresAt: time.Now().Add(time.Hour)})
		require.ErrorIs(t, err, controlplane.ErrConflict, "duplicate hash")
		cur, err := s.GetRefreshTokenByHash(ctx(t), "a2")
		require.NoError(t, err)
		require.Nil(t, cur.RotatedAt, "a failed rotation rolls back the mark")

		// Revoked tokens cannot rotate either.
		require.NoError(t, s.RevokeRefreshFamily(ctx(t), "famA", time.Now()))
		err = s.RotateRefreshToken(ctx(t), second.ID, &controlplane.RefreshToken{TokenHash: "a6", ExpiresAt: time.Now().Add(time.Hour)})
		require.ErrorIs(t, err, controlplane.ErrConflict)
	})
	t.Run("RotateRace", func(t *testing.T) {
		s := open(t)
		u := mkUser(t, s, "carol", controlplane.RoleUser)
		root := newTok(u.ID, "famR", "r0")
		require.NoError(t, s.CreateRefreshToken(ctx(t), root))
		const n = 8
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				errs[i] = s.RotateRefreshToken(ctx(t), root.ID, &controlplane.RefreshToken{
					TokenHash: fmt.Sprintf("r-next-%d", i), ExpiresAt: time.Now().Add(time.Hour)})
			})
		}
		wg.Wait()
		wins := 0
		for _, err := range errs {
			if err == nil {
				wins++
				continue
			}
			require.ErrorIs(t, err, controlplane.ErrConflict)
		}
		require.Equal(t, 1, wins, "exactly one racing rotation wins")
	})
	t.Run("Revoke", func(t *testing.T) {
		s := open(t)
		u := mkUser(t, s, "dave", controlplane.RoleUser)
		v := mkUser(t, s, "erin", controlplane.RoleUser)
		for i, tok := range []*controlplane.RefreshToken{newTok(u.ID, "f1", "x1"), newTok(u.ID, "f1", "x2"),
			newTok(u.ID, "f2", "x3"), newTok(v.ID, "f3", "x4")} {
			require.NoError(t, s.CreateRefreshToken(ctx(t), tok), i)
		}
		at := time.Now().Add(-time.Minute)
		require.NoError(t, s.RevokeRefreshFamily(ctx(t), "f1", at))
		require.NoError(t, s.RevokeRefreshFamily(ctx(t), "f1", time.Now()), "idempotent")
		require.NoError(t, s.RevokeRefreshFamily(ctx(t), "no-such-family", time.Now()))
		revoked := func(hash string) bool {
			tok, err := s.GetRefreshTokenByHash(ctx(t), hash)
			require.NoError(t, err)
			return tok.RevokedAt != nil
		}
		require.True(t, revoked("x1"))
		require.True(t, revoked("x2"))
		require.False(t, revoked("x3"))
		tok, err := s.GetRefreshTokenByHash(ctx(t), "x1")
		require.NoError(t, err)
		require.WithinDuration(t, at, *tok.RevokedAt, time.Microsecond, "the first revocation time is kept")

		require.NoError(t, s.RevokeUserRefreshTokens(ctx(t), u.ID, time.Now()))
		require.True(t, revoked("x3"))
		require.False(t, revoked("x4"), "other users keep their tokens")
	})
}
