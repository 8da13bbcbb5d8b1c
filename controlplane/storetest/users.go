package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
)

func testUsers(t *testing.T, open Opener) {
	t.Run("LoginFailuresAtomic", func(t *testing.T) {
		s := open(t)
		u := mkUser(t, s, "target", controlplane.RoleAdmin)
		// Nine concurrent failures are nine, not one: the count is kept by
		// the store, never read, incremented and written back.
		var wg sync.WaitGroup
		for range 9 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := s.RecordLoginFailure(ctx(t), u.ID, 100, func(int) time.Duration { return time.Hour })
				assert.NoError(t, err)
			}()
		}
		wg.Wait()
		got, err := s.GetUser(ctx(t), u.ID)
		require.NoError(t, err)
		require.Equal(t, 9, got.FailedLogins)
		require.Nil(t, got.LockedUntil)

		// The failure that reaches the limit locks, restarts the count and
		// records the lockout; the next lockout is given the history.
		var seen []int
		lockFor := func(prev int) time.Duration { seen = append(seen, prev); return time.Duration(prev+1) * time.Hour }
		got, err = s.RecordLoginFailure(ctx(t), u.ID, 10, lockFor)
		require.NoError(t, err)
		require.Zero(t, got.FailedLogins)
		require.Equal(t, 1, got.Lockouts)
		require.NotNil(t, got.LockedUntil)
		require.Equal(t, got.UpdatedAt.Add(time.Hour), *got.LockedUntil, "locked for lockFor(0) from now")
		for range 2 {
			got, err = s.RecordLoginFailure(ctx(t), u.ID, 2, lockFor)
			require.NoError(t, err)
		}
		require.Equal(t, 2, got.Lockouts)
		require.Equal(t, []int{0, 1}, seen)
		require.Equal(t, got.UpdatedAt.Add(2*time.Hour), *got.LockedUntil, "locked for lockFor(1) from now")

		zero := 0
		var none *time.Time
		got, err = s.UpdateUser(ctx(t), u.ID, controlplane.UserUpdate{FailedLogins: &zero, LockedUntil: &none, Lockouts: &zero})
		require.NoError(t, err)
		require.Zero(t, got.Lockouts)
		require.Nil(t, got.LockedUntil)
		_, err = s.RecordLoginFailure(ctx(t), 999999, 10, lockFor)
		require.ErrorIs(t, err, controlplane.ErrNotFound)
	})
	t.Run("CreateGet", func(t *testing.T) {
		s := open(t)
		u := &controlplane.User{Username: "alice", DisplayName: "爱丽丝", Email: "a@example.com",
			Role: controlplane.RoleOperator, Tenant: "t1", PasswordHash: "$argon2id$x"}
		require.NoError(t, s.CreateUser(ctx(t), u))
		require.NotZero(t, u.ID)
		require.False(t, u.CreatedAt.IsZero())
		require.Equal(t, controlplane.UserActive, u.Status, "status defaults to active")

		got, err := s.GetUser(ctx(t), u.ID)
		require.NoError(t, err)
		require.Equal(t, u, got)
		byName, err := s.GetUserByName(ctx(t), "alice")
		require.NoError(t, err)
		require.Equal(t, u, byName)
		n, err := s.CountUsers(ctx(t))
		require.NoError(t, err)
		require.Equal(t, 1, n)
	})
	t.Run("Errors", func(t *testing.T) {
		s := open(t)
		mkUser(t, s, "bob", controlplane.RoleUser)
		cases := []struct {
			name string
			u    controlplane.User
			want error
		}{
			{"duplicate", controlplane.User{Username: "bob", Role: controlplane.RoleUser}, controlplane.ErrConflict},
			{"empty name", controlplane.User{Username: " ", Role: controlplane.RoleUser}, controlplane.ErrInvalid},
			{"bad role", controlplane.User{Username: "x", Role: "root"}, controlplane.ErrInvalid},
			{"bad status", controlplane.User{Username: "y", Role: controlplane.RoleUser, Status: "zombie"}, controlplane.ErrInvalid},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				require.ErrorIs(t, s.CreateUser(ctx(t), &c.u), c.want)
			})
		}
		_, err := s.GetUser(ctx(t), 999999)
		require.ErrorIs(t, err, controlplane.ErrNotFound)
		_, err = s.GetUserByName(ctx(t), "nobody")
		require.ErrorIs(t, err, controlplane.ErrNotFound)
		_, err = s.UpdateUser(ctx(t), 999999, controlplane.UserUpdate{DisplayName: ptr("x")})
		require.ErrorIs(t, err, controlplane.ErrNotFound)
		require.ErrorIs(t, s.DeleteUser(ctx(t), 999999), controlplane.ErrNotFound)
	})
	t.Run("Update", func(t *testing.T) {
		s := open(t)
		u := mkUser(t, s, "carol", controlplane.RoleViewer)
		lock := time.Now().Add(15 * time.Minute)
		got, err := s.UpdateUser(ctx(t), u.ID, controlplane.UserUpdate{
			DisplayName: ptr("Carol C"), Email: ptr("c@example.com"), Role: ptr(controlplane.RoleAdmin),
			Status: ptr(controlplane.UserDisabled), Tenant: ptr("t2"), PasswordHash: ptr("new"),
			FailedLogins: ptr(3), LockedUntil: ptr(&lock),
		})
		require.NoError(t, err)
		require.Equal(t, "Carol C", got.DisplayName)
		require.Equal(t, "c@example.com", got.Email)
		require.Equal(t, controlplane.RoleAdmin, got.Role)
		require.Equal(t, controlplane.UserDisabled, got.Status)
		require.Equal(t, "t2", got.Tenant)
		require.Equal(t, "new", got.PasswordHash)
		require.Equal(t, 3, got.FailedLogins)
		require.NotNil(t, got.LockedUntil)
		require.WithinDuration(t, lock, *got.LockedUntil, time.Microsecond)
		require.False(t, got.UpdatedAt.Before(u.UpdatedAt))
		require.Equal(t, u.CreatedAt, got.CreatedAt)

		// An empty update changes nothing but is not an error; a nil
		// *time.Time clears the lock.
		same, err := s.UpdateUser(ctx(t), u.ID, controlplane.UserUpdate{})
		require.NoError(t, err)
		require.Equal(t, "Carol C", same.DisplayName)
		cleared, err := s.UpdateUser(ctx(t), u.ID, controlplane.UserUpdate{LockedUntil: ptr[*time.Time](nil), FailedLogins: ptr(0)})
		require.NoError(t, err)
		require.Nil(t, cleared.LockedUntil)
		require.Zero(t, cleared.FailedLogins)

		_, err = s.UpdateUser(ctx(t), u.ID, controlplane.UserUpdate{Role: ptr(controlplane.Role("god"))})
		require.ErrorIs(t, err, controlplane.ErrInvalid)
		_, err = s.UpdateUser(ctx(t), u.ID, controlplane.UserUpdate{Status: ptr(controlplane.UserStatus("gone"))})
		require.ErrorIs(t, err, controlplane.ErrInvalid)
	})
	t.Run("DeleteCascades", func(t *testing.T) {
		s := open(t)
		u := mkUser(t, s, "dave", controlplane.RoleUser)
		other := mkUser(t, s, "erin", controlplane.RoleUser)
		rt := &controlplane.RefreshToken{UserID: u.ID, Family: "f", TokenHash: "h-dave", ExpiresAt: time.Now().Add(time.Hour)}
		require.NoError(t, s.CreateRefreshToken(ctx(t), rt))
		key := &controlplane.APIKey{Name: "k", Prefix: "hf_dave", SecretHash: "s", Role: controlplane.RoleUser, OwnerID: u.ID}
		require.NoError(t, s.CreateAPIKey(ctx(t), key))
		task := mkTask(t, s, u.ID, nil)
		require.Equal(t, "dave", task.Owner)

		require.NoError(t, s.DeleteUser(ctx(t), u.ID))
		_, err := s.GetUser(ctx(t), u.ID)
		require.ErrorIs(t, err, controlplane.ErrNotFound)
		_, err = s.GetRefreshTokenByHash(ctx(t), "h-dave")
		require.ErrorIs(t, err, controlplane.ErrNotFound, "refresh tokens go with the user")
		_, err = s.GetAPIKeyByPrefix(ctx(t), "hf_dave")
		require.ErrorIs(t, err, controlplane.ErrNotFound, "api keys go with the user")
		kept, err := s.GetTask(ctx(t), task.ID)
		require.NoError(t, err, "tasks outlive their owner")
		require.Zero(t, kept.OwnerID)
		require.Equal(t, "dave", kept.Owner)
		_, err = s.GetUser(ctx(t), other.ID)
		require.NoError(t, err)
		n, err := s.CountUsers(ctx(t))
		require.NoError(t, err)
		require.Equal(t, 1, n)
	})
}
