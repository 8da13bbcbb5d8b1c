package sqlite

import (
	"context"
	"database/sql"
)

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
