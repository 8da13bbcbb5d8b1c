package sqlite

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The shared queries (storesql) are written with PostgreSQL's $n
// placeholders; the driver must bind "$n" to the n-th argument, reused and
// out of order, and the time scanners must read what ts wrote.
func TestSharedPlaceholdersAndTimes(t *testing.T) {
	db, err := Open(t.Context(), filepath.Join(t.TempDir(), "test.db"), Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	s := shared{db}
	at := time.Date(2026, 3, 4, 5, 6, 7, 891011000, time.UTC)

	var a, b, c int
	var got time.Time
	var none, some *time.Time
	err = s.Reader().QueryRow(t.Context(), `SELECT $2, $1, $2, $3, NULL, $4`, 1, 2, s.Time(at), s.NullTime(&at)).
		Scan(&a, &b, &c, s.ScanTime(&got), s.ScanNullTime(&none), s.ScanNullTime(&some))
	require.NoError(t, err)
	require.Equal(t, []int{2, 1, 2}, []int{a, b, c})
	require.Equal(t, at, got)
	require.Equal(t, time.UTC, got.Location())
	require.Nil(t, none)
	require.NotNil(t, some)
	require.Equal(t, at, *some)

	// A text where a time should be is an error, not a zero time.
	err = s.Reader().QueryRow(t.Context(), `SELECT 'x'`).Scan(s.ScanTime(&got))
	require.Error(t, err)
}
