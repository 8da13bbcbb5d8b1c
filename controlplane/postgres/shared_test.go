package postgres_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane/postgres"
	"github.com/heteroflow/heteroflow/controlplane/postgres/pgtest"
)

// The shared queries' time arguments and scanners (storesql.Dialect) round
// trip through TIMESTAMPTZ in UTC, NULL included.
func TestSharedTimes(t *testing.T) {
	s := postgres.Shared(pgtest.Open(t))
	at := time.Date(2026, 3, 4, 5, 6, 7, 891011000, time.UTC)
	var got time.Time
	var none, some *time.Time
	err := s.Reader().QueryRow(t.Context(), `SELECT $1::timestamptz AT TIME ZONE 'Asia/Shanghai' AT TIME ZONE 'Asia/Shanghai',
		NULL::timestamptz, $2::timestamptz`, s.Time(at), s.NullTime(&at)).
		Scan(s.ScanTime(&got), s.ScanNullTime(&none), s.ScanNullTime(&some))
	require.NoError(t, err)
	require.Equal(t, at, got)
	require.Equal(t, time.UTC, got.Location())
	require.Nil(t, none)
	require.NotNil(t, some)
	require.Equal(t, at, *some)

	// NULL in a column read as NOT NULL is an error, not a zero time.
	err = s.Reader().QueryRow(t.Context(), `SELECT NULL::timestamptz`).Scan(s.ScanTime(&got))
	require.Error(t, err)
}
