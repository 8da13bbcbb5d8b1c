package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/heteroflow/heteroflow/controlplane"
)

// page runs the count and the windowed select of one list in tx, calling
// scan for each row. where holds AND-ed conditions with ? placeholders.
// Table and column names come from code, never from input.
func page(ctx context.Context, tx *sql.Tx, table string, where []string, args []any,
	order string, p controlplane.Page, cols string, scan func(*sql.Rows) error,
) (int, error) {
	p = p.Normalize()
	cond := ""
	if len(where) > 0 {
		cond = " WHERE " + strings.Join(where, " AND ")
	}
	var total int
	if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+table+cond, args...).Scan(&total); err != nil {
		return 0, mapErr(err)
	}
	if total == 0 || p.Offset >= total {
		return total, nil
	}
	q := fmt.Sprintf("SELECT %s FROM %s%s ORDER BY %s LIMIT ? OFFSET ?", cols, table, cond, order)
	rows, err := tx.QueryContext(ctx, q, append(args, p.Limit, p.Offset)...)
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
func affected(res sql.Result, what string) error {
	n, err := res.RowsAffected()
	if err != nil {
		return mapErr(err)
	}
	if n == 0 {
		return fmt.Errorf("%s: %w", what, controlplane.ErrNotFound)
	}
	return nil
}

// rowScanner is what the scan* functions read from: *sql.Row or *sql.Rows.
type rowScanner = interface{ Scan(...any) error }

// queryAll runs q on the read pool and scans every row with scan.
func queryAll[T any](ctx context.Context, db *DB, scan func(rowScanner) (T, error), q string, args ...any) ([]T, error) {
	var out []T
	err := db.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, q, args...)
		if err != nil {
			return mapErr(err)
		}
		defer rows.Close()
		for rows.Next() {
			v, err := scan(rows)
			if err != nil {
				return err
			}
			out = append(out, v)
		}
		return mapErr(rows.Err())
	})
	return out, err
}
