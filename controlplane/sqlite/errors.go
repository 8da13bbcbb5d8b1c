package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/heteroflow/heteroflow/controlplane"
)

// mapErr turns driver errors into the domain's sentinels; this is the only
// place that knows SQLite's result codes. The driver error's text is kept for
// logs, but its type does not leak above the store; a constraint refusal
// (a 409 the API shows as is) keeps neither: its text names tables,
// columns and constraints.
func mapErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return controlplane.ErrNotFound
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if errors.Is(err, sql.ErrConnDone) || err.Error() == "sql: database is closed" {
		return fmt.Errorf("%w: %v", controlplane.ErrUnavailable, err)
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return controlplane.ConflictExists()
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			return controlplane.ConflictReference()
		}
		switch se.Code() & 0xff { // primary result code
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_CANTOPEN,
			sqlite3.SQLITE_IOERR, sqlite3.SQLITE_FULL, sqlite3.SQLITE_READONLY:
			return fmt.Errorf("%w: %v", controlplane.ErrUnavailable, err)
		}
	}
	return err
}

// isForeignKey reports a foreign-key violation (an insert naming a missing row).
func isForeignKey(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code() == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY
}
