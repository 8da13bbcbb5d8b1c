package storeopen_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/postgres"
	"github.com/heteroflow/heteroflow/controlplane/postgres/pgtest"
	"github.com/heteroflow/heteroflow/controlplane/sqlite"
	"github.com/heteroflow/heteroflow/controlplane/storeopen"
)

func TestParse(t *testing.T) {
	cases := []struct {
		dsn     string
		kind    storeopen.Kind
		path    string
		wantErr bool
	}{
		{dsn: "", kind: storeopen.KindSQLite, path: filepath.Join("/data", "heteroflow.db")},
		{dsn: "sqlite", kind: storeopen.KindSQLite, path: filepath.Join("/data", "heteroflow.db")},
		{dsn: " SQLite ", kind: storeopen.KindSQLite, path: filepath.Join("/data", "heteroflow.db")},
		{dsn: "./x/hf.db", kind: storeopen.KindSQLite, path: "./x/hf.db"},
		{dsn: "/var/lib/hf/state", kind: storeopen.KindSQLite, path: "/var/lib/hf/state"},
		{dsn: "hf.sqlite3", kind: storeopen.KindSQLite, path: "hf.sqlite3"},
		{dsn: "sqlite:///tmp/a.db", kind: storeopen.KindSQLite, path: "/tmp/a.db"},
		{dsn: "sqlite:rel.db", kind: storeopen.KindSQLite, path: "rel.db"},
		{dsn: "postgres://u@h:5432/db", kind: storeopen.KindPostgres},
		{dsn: "postgresql://u@h/db?sslmode=disable", kind: storeopen.KindPostgres},
		{dsn: "mysql://u@h/db", wantErr: true},
		{dsn: "mysql", wantErr: true},
		{dsn: "sqlite://", wantErr: true},
	}
	for _, c := range cases {
		t.Run(c.dsn, func(t *testing.T) {
			got, err := storeopen.Parse(c.dsn, "/data")
			if c.wantErr {
				require.ErrorIs(t, err, controlplane.ErrInvalid)
				require.Contains(t, err.Error(), "postgres://", "the error lists the accepted forms")
				return
			}
			require.NoError(t, err)
			require.Equal(t, c.kind, got.Kind)
			if c.kind == storeopen.KindSQLite {
				require.Equal(t, c.path, got.Path)
			} else {
				require.Equal(t, c.dsn, got.DSN)
			}
		})
	}
}

func TestOpenSQLiteDefault(t *testing.T) {
	dir := t.TempDir()
	s, err := storeopen.Open(t.Context(), "", dir, nil)
	require.NoError(t, err)
	defer s.Close()
	require.IsType(t, &sqlite.DB{}, s)
	require.Equal(t, filepath.Join(dir, "heteroflow.db"), s.(*sqlite.DB).Path())
	require.NoError(t, s.Ping(t.Context()))
	require.FileExists(t, filepath.Join(dir, "heteroflow.db"))
}

func TestOpenPostgres(t *testing.T) {
	dsn := pgtest.Schema(t)
	s, err := storeopen.Open(t.Context(), dsn, t.TempDir(), nil)
	require.NoError(t, err)
	defer s.Close()
	require.IsType(t, &postgres.DB{}, s)
	require.NoError(t, s.Ping(t.Context()))
}

func TestOpenErrors(t *testing.T) {
	_, err := storeopen.Open(t.Context(), "oracle://x", t.TempDir(), nil)
	require.ErrorIs(t, err, controlplane.ErrInvalid)
	// Nothing listens on port 1: connection refused is ErrUnavailable.
	_, err = storeopen.Open(t.Context(), "postgres://postgres@127.0.0.1:1/x?sslmode=disable&connect_timeout=2", "", nil)
	require.ErrorIs(t, err, controlplane.ErrUnavailable)
}
