// Package pgtest gives each test its own PostgreSQL schema, so that test
// packages running in parallel never see each other's rows. Tests are skipped
// when HETEROFLOW_TEST_PG_DSN is unset.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane/postgres"
)

// EnvDSN names the variable holding the test database's connection string.
const EnvDSN = "HETEROFLOW_TEST_PG_DSN"

// EnvStore, set to "postgres", makes test harnesses that default to SQLite
// (the agent API's and the scheduler's) run on PostgreSQL instead, so one
// suite covers both stores: HETEROFLOW_TEST_STORE=postgres go test ./….
const EnvStore = "HETEROFLOW_TEST_STORE"

// Selected reports whether EnvStore asks for PostgreSQL.
func Selected() bool { return os.Getenv(EnvStore) == "postgres" }

// DSN returns the test database DSN or skips the test.
func DSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(EnvDSN)
	if dsn == "" {
		t.Skip(EnvDSN + " is not set; skipping PostgreSQL tests")
	}
	return dsn
}

// Schema creates a uniquely named schema, drops it (CASCADE) when the test
// ends, and returns a DSN whose search_path points at it.
func Schema(t testing.TB) string {
	t.Helper()
	base := DSN(t)
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "hf_test_" + hex.EncodeToString(b[:])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	require.NoError(t, err, "connect to %s", EnvDSN)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "CREATE SCHEMA "+schema)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(base)
	require.NoError(t, err)
	q := u.Query()
	q.Set("search_path", schema) // pgx passes unknown keys as run-time parameters
	u.RawQuery = q.Encode()
	return u.String()
}

// Open returns a migrated store in a fresh schema, closed at cleanup.
func Open(t testing.TB) *postgres.DB {
	t.Helper()
	return OpenWith(t, postgres.Options{MaxConns: 4})
}

// OpenWith is Open with options (a logger, an injected clock).
func OpenWith(t testing.TB, opts postgres.Options) *postgres.DB {
	t.Helper()
	dsn := Schema(t)
	db, err := postgres.Open(context.Background(), dsn, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db
}
