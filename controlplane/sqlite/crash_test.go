package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/sqlite"
	"github.com/heteroflow/heteroflow/controlplane/storetest"
)

const crashPathEnv = "HETEROFLOW_CRASH_SQLITE_PATH"

// TestCrashConsistency kills a child writing to the database with SIGKILL
// mid-burst and checks the reopened store (issue item 6).
func TestCrashConsistency(t *testing.T) {
	if storetest.IsCrashChild() {
		storetest.CrashChild(func(ctx context.Context) (controlplane.Store, error) {
			return sqlite.Open(ctx, os.Getenv(crashPathEnv), sqlite.Options{})
		})
		return
	}
	if testing.Short() {
		t.Skip("crash test skipped in -short mode")
	}
	path := filepath.Join(t.TempDir(), "crash.db")
	storetest.CrashTest(t, "TestCrashConsistency", []string{crashPathEnv + "=" + path},
		func(t *testing.T) controlplane.Store {
			db, err := sqlite.Open(t.Context(), path, sqlite.Options{})
			if err != nil {
				t.Fatalf("reopen after crash: %v", err)
			}
			t.Cleanup(func() { _ = db.Close() })
			return db
		})
}
