package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storesql"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// shared lends the DB to the queries both stores share (storesql): reads on
// the reader pool, every write on the single writer connection.
type shared struct{ db *DB }

var _ storesql.DB = shared{}

func (s shared) Now() time.Time            { return s.db.now() }
func (shared) Time(t time.Time) any        { return ts(t) }
func (shared) NullTime(t *time.Time) any   { return tsPtr(t) }
func (shared) ScanTime(dst *time.Time) any { return microTime{dst} }
func (shared) ScanNullTime(dst **time.Time) any {
	return nullMicroTime{dst}
}

// ILike: SQLite's LIKE already ignores ASCII case.
func (shared) ILike() string { return "LIKE" }

func (s shared) Reader() storesql.Conn { return conn{s.db.r} }

func (s shared) ReadTx(ctx context.Context, fn func(storesql.Conn) error) error {
	return s.db.read(ctx, func(tx *sql.Tx) error { return fn(conn{tx}) })
}

func (s shared) Write(ctx context.Context, fn func(storesql.Conn) error) error {
	return s.Tx(ctx, fn)
}

func (s shared) Tx(ctx context.Context, fn func(storesql.Conn) error) error {
	return s.db.write(ctx, func(tx *sql.Tx) error { return fn(conn{tx}) })
}

// connQuerier is what *sql.DB and *sql.Tx share.
type connQuerier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// conn adapts a pool or transaction to storesql.Conn, mapping errors.
type conn struct{ q connQuerier }

func (c conn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := c.q.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, connErr(err)
	}
	n, err := res.RowsAffected()
	return n, connErr(err)
}

func (c conn) Query(ctx context.Context, query string, args ...any) (storesql.Rows, error) {
	rows, err := c.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, connErr(err)
	}
	return liteRows{rows}, nil
}

func (c conn) QueryRow(ctx context.Context, query string, args ...any) storesql.Row {
	return liteRow{c.q.QueryRowContext(ctx, query, args...)}
}

type liteRow struct{ r *sql.Row }

func (r liteRow) Scan(dest ...any) error { return connErr(r.r.Scan(dest...)) }

type liteRows struct{ r *sql.Rows }

func (r liteRows) Next() bool             { return r.r.Next() }
func (r liteRows) Scan(dest ...any) error { return connErr(r.r.Scan(dest...)) }
func (r liteRows) Err() error             { return connErr(r.r.Err()) }
func (r liteRows) Close()                 { _ = r.r.Close() }

// microTime scans an INTEGER unix-microsecond column into a UTC time.
type microTime struct{ dst *time.Time }

func (m microTime) Scan(src any) error {
	v, ok := src.(int64)
	if !ok {
		return fmt.Errorf("time column holds %T, want INTEGER", src)
	}
	*m.dst = fromTS(v)
	return nil
}

// nullMicroTime is microTime for a nullable column.
type nullMicroTime struct{ dst **time.Time }

func (m nullMicroTime) Scan(src any) error {
	if src == nil {
		*m.dst = nil
		return nil
	}
	var t time.Time
	if err := (microTime{&t}).Scan(src); err != nil {
		return err
	}
	*m.dst = &t
	return nil
}

// connErr maps a driver error for the shared queries.
func connErr(err error) error { return storesql.MapErr(err, mapErr, isForeignKey) }

func (shared) Contains(hay, needle string) string { return "instr(" + hay + ", " + needle + ") > 0" }

// ForUpdate: a write transaction holds SQLite's only write lock already.
func (shared) ForUpdate(...string) string { return "" }

func (shared) InventoryHasVendor(v string) string {
	return `EXISTS (SELECT 1 FROM json_each(nodes.inventory) WHERE json_extract(value, '$.vendor') = ` + v + `
		AND json_array_length(json_extract(value, '$.devices')) > 0)`
}

// Bytewise: SQLite's default BINARY collation already sorts by bytes.
func (shared) Bytewise(col string) string { return col }

func (shared) JSONText(col, key string) string { return "json_extract(" + col + ", '$." + key + "')" }

// ByteLength: length() of text counts characters; of a blob, bytes.
func (shared) ByteLength(expr string) string { return "length(CAST(" + expr + " AS BLOB))" }

// LockTable: the write transaction (BEGIN IMMEDIATE) is exclusive already.
func (shared) LockTable(string, string) string { return "" }

// LabelsContain: one json_each test a label, keys sorted so the statement
// text is stable for a given filter shape.
func (shared) LabelsContain(a *storeutil.Args, col string, labels map[string]string) ([]string, error) {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	conds := make([]string, 0, len(keys))
	for _, k := range keys {
		conds = append(conds, "EXISTS (SELECT 1 FROM json_each("+col+") WHERE key = "+a.Add(k)+
			" AND value = "+a.Add(labels[k])+")")
	}
	return conds, nil
}

func (s shared) TransitionTx(ctx context.Context, c storesql.Conn, tr controlplane.Transition) (*controlplane.Task, error) {
	tx, ok := c.(conn).q.(*sql.Tx)
	if !ok {
		return nil, errors.New("sqlite: task transition outside a write transaction")
	}
	return s.db.transitionTx(ctx, tx, tr)
}

func (s shared) InsertWorkflowSteps(ctx context.Context, c storesql.Conn, id int64, steps []*controlplane.WorkflowStep, now time.Time) error {
	tx, ok := c.(conn).q.(*sql.Tx)
	if !ok {
		return errors.New("sqlite: workflow steps outside a write transaction")
	}
	return s.db.insertWorkflowSteps(ctx, tx, id, steps, now)
}
