package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/storeopen"
)

// TestUserUnlock: the operator on the server machine lifts a lockout
// directly in the store, with no administrator session.
func TestUserUnlock(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	store, err := storeopen.Open(ctx, "", dir, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	until := time.Now().Add(time.Hour)
	u := &controlplane.User{Username: "admin", Role: controlplane.RoleAdmin, Status: controlplane.UserActive,
		PasswordHash: "x", FailedLogins: 3, LockedUntil: &until}
	require.NoError(t, store.CreateUser(ctx, u))
	require.NoError(t, store.Close())

	var out bytes.Buffer
	rootCmd.SetOut(&out)
	rootCmd.SetArgs([]string{"user", "unlock", "admin", "--data-dir", dir})
	require.NoError(t, rootCmd.Execute())
	require.Contains(t, out.String(), "unlocked admin")

	store, err = storeopen.Open(ctx, "", dir, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	defer store.Close()
	got, err := store.GetUser(ctx, u.ID)
	require.NoError(t, err)
	require.Nil(t, got.LockedUntil)
	require.Zero(t, got.FailedLogins)

	rootCmd.SetArgs([]string{"user", "unlock", "nobody", "--data-dir", dir})
	err = rootCmd.Execute()
	require.Error(t, err, "an unknown user is an error")
	require.ErrorContains(t, err, `no user "nobody"`)
	require.ErrorContains(t, err, "不存在")
}

// A data directory without a database is named as the mistake, and no
// empty database is created there.
func TestUserUnlockWrongDataDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "not-the-server")
	rootCmd.SetArgs([]string{"user", "unlock", "admin", "--data-dir", dir})
	err := rootCmd.Execute()
	require.ErrorContains(t, err, "no HeteroFlow database at "+filepath.Join(dir, storeopen.DefaultSQLiteFile))
	require.ErrorContains(t, err, "--data-dir")
	_, statErr := os.Stat(dir)
	require.True(t, os.IsNotExist(statErr), "nothing is created in the wrong place")
}
