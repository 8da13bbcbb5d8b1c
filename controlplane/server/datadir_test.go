package server

import (
	"context"
	"encoding/base64"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/auth"
	"github.com/heteroflow/heteroflow/controlplane/sqlite"
	"github.com/heteroflow/heteroflow/controlplane/storeopen"
)

func mode(t *testing.T, p string) os.FileMode {
	t.Helper()
	st, err := os.Stat(p)
	require.NoError(t, err)
	return st.Mode().Perm()
}

// TestDataDirPrivateAndKeyMoved: an existing world-readable data directory
// whose database holds the JWT signing key (as earlier versions kept it)
// comes out 0700, the database 0600, and the key moved to a 0600 file and
// out of the database; tokens signed before still verify.
func TestDataDirPrivateAndKeyMoved(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.Chmod(dir, 0o755))
	dbPath := filepath.Join(dir, storeopen.DefaultSQLiteFile)
	old, err := sqlite.Open(ctx, dbPath, sqlite.Options{})
	require.NoError(t, err)
	key, err := auth.LoadOrCreateSigningKey(ctx, old) // the old place
	require.NoError(t, err)
	require.NoError(t, old.Close())
	require.NoError(t, os.Chmod(dbPath, 0o644))
	issuer, err := auth.NewTokenIssuer(key, time.Hour, time.Now)
	require.NoError(t, err)
	oldToken, _, err := issuer.Issue(&controlplane.User{ID: 1, Username: "admin", Role: controlplane.RoleAdmin})
	require.NoError(t, err)

	cfg := Defaults()
	cfg.APIAddr, cfg.ConsoleAddr = "127.0.0.1:0", ""
	cfg.DataDir = dir
	s, err := New(ctx, cfg, Options{Logger: slog.New(slog.DiscardHandler), Stderr: &strings.Builder{},
		Getenv: func(string) string { return "" }, Version: "test"})
	require.NoError(t, err)
	t.Cleanup(func() {
		c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Shutdown(c)
	})

	require.Equal(t, os.FileMode(0o700), mode(t, dir), "data directory")
	require.Equal(t, os.FileMode(0o600), mode(t, dbPath), "database file")
	if _, err := os.Stat(dbPath + "-wal"); err == nil {
		require.Equal(t, os.FileMode(0o600), mode(t, dbPath+"-wal"))
	}
	keyFile := filepath.Join(dir, "jwt.key")
	require.Equal(t, os.FileMode(0o600), mode(t, keyFile), "key file")
	b, err := os.ReadFile(keyFile)
	require.NoError(t, err)
	require.Equal(t, base64.StdEncoding.EncodeToString(key), strings.TrimSpace(string(b)), "the existing key is kept")
	_, err = s.Store().GetSetting(ctx, auth.SigningKeySetting)
	require.ErrorIs(t, err, controlplane.ErrNotFound, "the key is no longer in the database")
	require.Equal(t, key, s.SigningKey())
	p, err := authFor(t, s).Authenticate(ctx, oldToken, "127.0.0.1")
	require.NoError(t, err, "tokens signed before the move still verify")
	require.Equal(t, "admin", p.Username)
}

func authFor(t *testing.T, s *Server) *auth.Service {
	t.Helper()
	a, err := auth.New(s.Store(), auth.Config{SigningKey: s.SigningKey()}, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	return a
}

// TestSigningKeyFileFresh: a new installation creates a random key file
// and never writes the key into the database.
func TestSigningKeyFileFresh(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store, err := sqlite.Open(ctx, filepath.Join(dir, "hf.db"), sqlite.Options{})
	require.NoError(t, err)
	defer store.Close()
	path := filepath.Join(dir, "keys", "jwt.key")
	k1, err := auth.LoadOrCreateSigningKeyFile(ctx, store, path)
	require.NoError(t, err)
	require.Len(t, k1, 32)
	require.Equal(t, os.FileMode(0o600), mode(t, path))
	require.Equal(t, os.FileMode(0o700), mode(t, filepath.Dir(path)))
	_, err = store.GetSetting(ctx, auth.SigningKeySetting)
	require.ErrorIs(t, err, controlplane.ErrNotFound)
	k2, err := auth.LoadOrCreateSigningKeyFile(ctx, store, path)
	require.NoError(t, err)
	require.Equal(t, k1, k2, "the same key on the next start")
}
