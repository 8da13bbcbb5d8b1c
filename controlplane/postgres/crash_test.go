package postgres_test

import (
	"context"
	"os"
	"testing"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/postgres"
	"github.com/heteroflow/heteroflow/controlplane/postgres/pgtest"
	"github.com/heteroflow/heteroflow/controlplane/storetest"
)

const crashDSNEnv = "HETEROFLOW_CRASH_PG_DSN"

// TestCrashConsistency kills a child writing to PostgreSQL with SIGKILL
// mid-burst and checks the store afterwards (issue item 6).
func TestCrashConsistency(t *testing.T) {
	if storetest.IsCrashChild() {
		storetest.CrashChild(func(ctx context.Context) (controlplane.Store, error) {
			return postgres.Open(ctx, os.Getenv(crashDSNEnv), postgres.Options{})
		})
		return
	}
	if testing.Short() {
		t.Skip("crash test skipped in -short mode")
	}
	dsn := pgtest.Schema(t)
	storetest.CrashTest(t, "TestCrashConsistency", []string{crashDSNEnv + "=" + dsn},
		func(t *testing.T) controlplane.Store {
			db, err := postgres.Open(t.Context(), dsn, postgres.Options{})
			if err != nil {
				t.Fatalf("reopen after crash: %v", err)
			}
			t.Cleanup(func() { _ = db.Close() })
			return db
		})
}
