package sqlite

import (
	"database/sql"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
)

func TestPragmas(t *testing.T) {
	db, err := Open(t.Context(), filepath.Join(t.TempDir(), "p.db"), Options{})
	require.NoError(t, err)
	defer db.Close()
	cases := []struct {
		pragma string
		want   string
	}{
		{"journal_mode", "wal"},
		{"foreign_keys", "1"},
		{"synchronous", "1"}, // NORMAL
		{"busy_timeout", fmt.Sprint(busyTimeout.Milliseconds())},
	}
	for _, c := range cases {
		t.Run(c.pragma, func(t *testing.T) {
			for name, pool := range map[string]*sql.DB{"writer": db.w, "reader": db.r} {
				var got string
				require.NoError(t, pool.QueryRow("PRAGMA "+c.pragma).Scan(&got), name)
				require.Equal(t, c.want, got, name)
			}
		})
	}
	var qo string
	require.NoError(t, db.r.QueryRow("PRAGMA query_only").Scan(&qo))
	require.Equal(t, "1", qo, "readers cannot write")
}

// TestReopen checks migrations are versioned: a second Open applies nothing
// and keeps the data.
func TestReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.db")
	db, err := Open(t.Context(), path, Options{})
	require.NoError(t, err)
	require.NoError(t, db.PutSetting(t.Context(), "k", "v"))
	require.NoError(t, db.Close())
	db, err = Open(t.Context(), path, Options{})
	require.NoError(t, err)
	defer db.Close()
	v, err := db.GetSetting(t.Context(), "k")
	require.NoError(t, err)
	require.Equal(t, "v", v)
	files, err := fs.Glob(migrations, "migrations/*.sql")
	require.NoError(t, err)
	var n int
	require.NoError(t, db.r.QueryRow("SELECT COUNT(*) FROM goose_db_version WHERE version_id > 0").Scan(&n))
	require.Equal(t, len(files), n, "each migration applied exactly once")
}

// TestConcurrentWriters hammers the store from many goroutines: with one
// writer connection and BEGIN IMMEDIATE no write fails with SQLITE_BUSY.
func TestConcurrentWriters(t *testing.T) {
	db, err := Open(t.Context(), filepath.Join(t.TempDir(), "c.db"), Options{})
	require.NoError(t, err)
	defer db.Close()
	const workers, each = 16, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				task := &controlplane.Task{Spec: controlplane.TaskSpec{Name: fmt.Sprintf("w%d-%d", w, i), Command: []string{"x"}}}
				if err := db.CreateTask(t.Context(), task); err != nil {
					errs <- err
					continue
				}
				if _, _, err := db.ListTasks(t.Context(), controlplane.TaskFilter{Page: controlplane.Page{Limit: 5}}); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	_, total, err := db.ListTasks(t.Context(), controlplane.TaskFilter{})
	require.NoError(t, err)
	require.Equal(t, workers*each, total)
}

func TestOpenErrors(t *testing.T) {
	_, err := Open(t.Context(), "", Options{})
	require.ErrorIs(t, err, controlplane.ErrInvalid)
}
