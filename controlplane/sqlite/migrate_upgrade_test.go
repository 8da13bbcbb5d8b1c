package sqlite

import (
	"context"
	"database/sql"
	"io/fs"
	"log/slog"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/pressly/goose/v3"
	"github.com/stretchr/testify/require"
)

// lastRelease is what the previous release shipped. A database created by it
// holds these versions, so every migration added since must be numbered
// above the newest: goose refuses to apply a migration numbered below one
// already applied.
var lastRelease = []string{
	"00001_init.sql", "00002_nodes.sql", "00003_scheduling.sql", "00004_security.sql",
	"00005_alerts.sql", "00006_billing.sql", "00011_workflows.sql", "00012_tenants.sql",
	"00014_best_effort.sql", "00015_usage_measured.sql", "00016_usage_task_daily.sql",
}

// TestUpgradeFromLastRelease migrates a database only as far as the previous
// release did, then opens it with this release: every newer migration must
// apply in order.
func TestUpgradeFromLastRelease(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	raw, err := sql.Open("sqlite", dsn(path, false))
	require.NoError(t, err)
	old := fstest.MapFS{}
	for _, name := range lastRelease {
		b, err := fs.ReadFile(migrations, "migrations/"+name)
		require.NoError(t, err)
		old[name] = &fstest.MapFile{Data: b}
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, raw, old, goose.WithDisableGlobalRegistry(true))
	require.NoError(t, err)
	_, err = p.Up(ctx)
	require.NoError(t, err)
	require.NoError(t, raw.Close())

	db, err := Open(ctx, path, Options{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err, "an existing database must upgrade in order")
	require.NoError(t, db.Close())
}
