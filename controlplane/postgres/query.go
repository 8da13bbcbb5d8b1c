package postgres

import (
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// args collects positional parameters; add returns the next $n.
type args []any

func (a *args) add(v any) string {
	*a = append(*a, v)
	return "$" + strconv.Itoa(len(*a))
}

func utc(t time.Time) time.Time { return t.UTC() }

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := t.UTC()
	return &v
}

// nullID stores 0 as NULL for optional references.
func nullID(id int64) *int64 {
	if id == 0 {
		return nil
	}
	return &id
}

// collect scans every row of a query's result with scan.
func collect[T any](rows pgx.Rows, err error, scan func(pgx.Row) (T, error)) ([]T, error) {
	if err != nil {
		return nil, mapErr(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (T, error) { return scan(r) })
	return out, mapErr(err)
}
