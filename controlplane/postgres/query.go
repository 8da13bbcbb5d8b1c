package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heteroflow/heteroflow/controlplane"
)

// args collects positional parameters; add returns the next $n.
type args []any

func (a *args) add(v any) string {
	*a = append(*a, v)
	return "$" + strconv.Itoa(len(*a))
}

// page runs the count and the windowed select of one list in tx, calling
// scan for each row. Table and column names come from code, never from input.
func page(ctx context.Context, tx pgx.Tx, table string, where []string, a args,
	order string, p controlplane.Page, cols string, scan func(pgx.Rows) error,
) (int, error) {
	p = p.Normalize()
	cond := ""
	if len(where) > 0 {
		cond = " WHERE " + strings.Join(where, " AND ")
	}
	var total int
	if err := tx.QueryRow(ctx, "SELECT COUNT(*) FROM "+table+cond, a...).Scan(&total); err != nil {
		return 0, mapErr(err)
	}
	if total == 0 || p.Offset >= total {
		return total, nil
	}
	limit, offset := a.add(p.Limit), a.add(p.Offset)
	q := fmt.Sprintf("SELECT %s FROM %s%s ORDER BY %s LIMIT %s OFFSET %s", cols, table, cond, order, limit, offset)
	rows, err := tx.Query(ctx, q, a...)
	if err != nil {
		return 0, mapErr(err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return 0, err
		}
	}
	return total, mapErr(rows.Err())
}

// affected turns "no row changed" into ErrNotFound.
func affected(tag interface{ RowsAffected() int64 }, what string) error {
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%s: %w", what, controlplane.ErrNotFound)
	}
	return nil
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
