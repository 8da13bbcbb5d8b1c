package storesql

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// Row is one result row: *sql.Row, pgx.Row, or a row of Rows.
type Row interface{ Scan(dest ...any) error }

// Rows is a result set. Errors from Scan and Err are already mapped.
type Rows interface {
	Row
	Next() bool
	Err() error
	Close()
}

// Conn is a connection pool or a transaction of either store. Every error it
// returns (including a Row's Scan) is mapped to the domain's sentinels;
// "no rows" is controlplane.ErrNotFound.
type Conn interface {
	// Exec runs a statement and returns the number of rows it changed.
	Exec(ctx context.Context, query string, args ...any) (int64, error)
	Query(ctx context.Context, query string, args ...any) (Rows, error)
	QueryRow(ctx context.Context, query string, args ...any) Row
}

// Dialect is how a store encodes the values whose storage differs.
type Dialect interface {
	// Time is t as a query argument; NullTime the same with nil as NULL.
	Time(t time.Time) any
	NullTime(t *time.Time) any
	// ScanTime is a Scan destination filling *dst, in UTC; ScanNullTime
	// the same for a nullable column (NULL leaves *dst nil).
	ScanTime(dst *time.Time) any
	ScanNullTime(dst **time.Time) any
	// ILike is the case-insensitive LIKE operator.
	ILike() string
	// Contains is the condition "hay contains needle" (both SQL terms).
	Contains(hay, needle string) string
	// ForUpdate is the clause that locks the rows a SELECT in a write
	// transaction reads, of the tables aliased of (all when none); "" where
	// the transaction already holds the only write lock.
	ForUpdate(of ...string) string
	// InventoryHasVendor is the condition on nodes.inventory (a JSON array
	// of vendor snapshots) that some snapshot of vendor (a placeholder)
	// lists devices; the dialects' JSON functions differ.
	InventoryHasVendor(vendor string) string
	// Bytewise is col in an ORDER BY that sorts by bytes, whatever the
	// database's locale.
	Bytewise(col string) string
	// LockTable is the statement that locks table in mode for the rest of
	// a write transaction, "" where that transaction is exclusive already.
	LockTable(table, mode string) string
	// LabelsContain adds the conditions that the JSON object in col holds
	// every key and value of labels (PostgreSQL: jsonb containment through
	// its GIN index; SQLite: one json_each test a key).
	LabelsContain(a *storeutil.Args, col string, labels map[string]string) ([]string, error)
	// JSONText is the text value of key in the JSON object held in the
	// text column col (NULL when absent).
	JSONText(col, key string) string
	// ByteLength is the length in bytes of a text or blob expression.
	ByteLength(expr string) string
}

// DB is what a store lends the shared queries: its dialect, its clock and
// its ways of running statements.
type DB interface {
	Dialect
	// Now is the store's clock at stored precision.
	Now() time.Time
	// Reader is where single-statement reads run.
	Reader() Conn
	// ReadTx runs fn in a read-only transaction, so a page and its total
	// come from one snapshot.
	ReadTx(ctx context.Context, fn func(Conn) error) error
	// Write runs fn's statements as writes that each commit on their own
	// (PostgreSQL: on the pool; SQLite: on its single writer connection).
	Write(ctx context.Context, fn func(Conn) error) error
	// Tx runs fn in one write transaction.
	Tx(ctx context.Context, fn func(Conn) error) error
	// TransitionTx applies tr inside c, a transaction from Tx, with the
	// store's guarded statement (the same as TransitionTask's), so that
	// a state change commits together with the rows that go with it.
	TransitionTx(ctx context.Context, c Conn, tr controlplane.Transition) (*controlplane.Task, error)
	// InsertWorkflowSteps inserts a new workflow's steps (pending, in
	// order) inside c, a transaction from Tx: the dialects' bulk inserts differ.
	InsertWorkflowSteps(ctx context.Context, c Conn, workflowID int64, steps []*controlplane.WorkflowStep, now time.Time) error
}

// Queries implements the store methods whose SQL both dialects share. A
// store embeds it in its DB.
type Queries struct {
	db    DB
	inv   *inventoryCache // decoded node inventories (inventorycache.go)
	specs *specCache      // decoded task specs (taskspeccache.go)
}

// New returns the shared queries over db.
func New(db DB) Queries { return Queries{db: db, inv: newInventoryCache(), specs: newSpecCache()} }

// args returns an argument list in the shared placeholder style.
func (q Queries) args() *storeutil.Args {
	return &storeutil.Args{Numbered: true, Time: q.db.Time}
}

// all runs query on c and scans every row with scan; never nil.
func all[T any](ctx context.Context, c Conn, scan func(Row) (T, error), query string, args ...any) ([]T, error) {
	rows, err := c.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// affected turns "no row changed" into ErrNotFound.
func affected(n int64, err error, what string) error {
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if n == 0 {
		return fmt.Errorf("%s: %w", what, controlplane.ErrNotFound)
	}
	return nil
}

// page runs the count and the windowed select of one list on c (a read
// transaction), appending each scanned row to *out. where holds AND-ed
// conditions over a's placeholders. Table and column names come from code,
// never from input.
func page[T any](ctx context.Context, c Conn, table string, where []string, a *storeutil.Args,
	order string, p controlplane.Page, cols string, scan func(Row) (T, error), out *[]T,
) (int, error) {
	p = p.Normalize()
	cond := ""
	if len(where) > 0 {
		cond = " WHERE " + strings.Join(where, " AND ")
	}
	var total int
	if err := c.QueryRow(ctx, "SELECT COUNT(*) FROM "+table+cond, a.Vals...).Scan(&total); err != nil {
		return 0, err
	}
	if total == 0 || p.Offset >= total {
		return total, nil
	}
	lim, off := a.Add(p.Limit), a.Add(p.Offset)
	q := "SELECT " + cols + " FROM " + table + cond + " ORDER BY " + order + " LIMIT " + lim + " OFFSET " + off
	rows, err := all(ctx, c, scan, q, a.Vals...)
	if err != nil {
		return 0, err
	}
	*out = append(*out, rows...)
	return total, nil
}

// ErrForeignKey is wrapped (beside controlplane.ErrConflict) into a Conn's
// error when a statement names a row that does not exist.
var ErrForeignKey = errors.New("foreign key violation")

// MapErr maps a driver error with the store's mapErr (driver errors to the
// domain's sentinels) and marks foreign-key violations (isForeignKey) with
// ErrForeignKey, so callers can name the missing row.
func MapErr(err error, mapErr func(error) error, isForeignKey func(error) bool) error {
	if err == nil {
		return nil
	}
	if isForeignKey(err) {
		return fmt.Errorf("%w (%w)", mapErr(err), ErrForeignKey)
	}
	return mapErr(err)
}

func joinComma(s []string) string { return strings.Join(s, ", ") }

// NullID stores 0 as NULL for optional references.
func NullID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}
