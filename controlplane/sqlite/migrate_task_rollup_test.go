package sqlite

import (
	"context"
	"database/sql"
	"io/fs"
	"log/slog"
	"path/filepath"
	"testing"
	"testing/fstest"
	"time"

	"github.com/pressly/goose/v3"
	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
)

// TestTaskRollupBackfill: a database with usage records from before the
// per-task rollup gets the rollup filled from them when it upgrades, so its
// reports rank the same tasks; records metered afterwards add to it.
func TestTaskRollupBackfill(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	raw, err := sql.Open("sqlite", dsn(path, false))
	require.NoError(t, err)
	names, err := fs.Glob(migrations, "migrations/*.sql")
	require.NoError(t, err)
	old := fstest.MapFS{}
	for _, name := range names {
		if filepath.Base(name) >= "00016" {
			continue
		}
		b, err := fs.ReadFile(migrations, name)
		require.NoError(t, err)
		old[filepath.Base(name)] = &fstest.MapFile{Data: b}
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, raw, old, goose.WithDisableGlobalRegistry(true))
	require.NoError(t, err)
	_, err = p.Up(ctx)
	require.NoError(t, err)
	// Task 7: 2 h of a whole device over two days; task 8: 3 h of a half.
	for _, r := range []struct {
		id, task, ms, share int64
		day                 string
	}{{1, 7, 3_600_000, 1000, "2026-11-03"}, {1, 7, 3_600_000, 1000, "2026-11-04"}, {2, 8, 10_800_000, 500, "2026-11-04"}} {
		_, err := raw.ExecContext(ctx, `INSERT INTO usage_records (interval_id, day, start_at, end_at, duration_ms,
			task_id, attempt, node_id, device_pos, vendor, model, qos, tenant, memory_mib, compute_milli, share_milli)
			VALUES (?, ?, 0, 0, ?, ?, 1, 'n1', 0, 'nvidia', 'H100', 'gold', 't1', 1024, ?, ?)`,
			r.id, r.day, r.ms, r.task, r.share, r.share)
		require.NoError(t, err)
	}
	require.NoError(t, raw.Close())

	db, err := Open(ctx, path, Options{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	defer db.Close()
	from := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	top := func() []int64 {
		sums, err := db.SumUsage(ctx, controlplane.UsageSumRequest{TasksOnly: true, Top: 1,
			Filter: controlplane.UsageFilter{From: from, To: from.AddDate(0, 1, 0)},
			Rates:  []controlplane.UsageRate{{Vendor: "nvidia", Model: "H100", QoS: controlplane.QoSGold, DeviceMilliMS: 1}}})
		require.NoError(t, err)
		var ids []int64
		for _, s := range sums {
			ids = append(ids, s.TaskID)
		}
		return ids
	}
	require.Equal(t, []int64{7}, top(), "7.2e9 device-milli-ms against 5.4e9, from the backfilled rollup")

	day := time.Date(2026, 11, 5, 0, 0, 0, 0, time.UTC)
	_, err = db.RecordUsage(ctx, []*controlplane.UsageRecord{{IntervalID: 3, Day: day, Start: day, End: day.Add(time.Hour),
		DurationMS: 3_600_000, TaskID: 8, Attempt: 1, NodeID: "n1", Vendor: "nvidia", Model: "H100",
		QoS: controlplane.QoSGold, Tenant: "t1", MemoryMiB: 1024, ComputeMilli: 1000, ShareMilli: 1000}}, nil)
	require.NoError(t, err)
	require.Equal(t, []int64{8}, top(), "9e9 once the new record is added")
}
