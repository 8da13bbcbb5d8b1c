package postgres

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storesql"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// shared lends the DB to the queries both stores share (storesql):
// single statements on the pool, transactions from it.
type shared struct{ db *DB }

var _ storesql.DB = shared{}

func (s shared) Now() time.Time                 { return s.db.now() }
func (shared) Time(t time.Time) any             { return t }
func (shared) NullTime(t *time.Time) any        { return t }
func (shared) ScanTime(dst *time.Time) any      { return utcTime{dst} }
func (shared) ScanNullTime(dst **time.Time) any { return nullUTCTime{dst} }
func (shared) ILike() string                    { return "ILIKE" }
func (s shared) Reader() storesql.Conn          { return conn{s.db.pool} }
func (s shared) Write(ctx context.Context, fn func(storesql.Conn) error) error {
	return fn(conn{s.db.pool})
}

func (s shared) ReadTx(ctx context.Context, fn func(storesql.Conn) error) error {
	return s.db.readTx(ctx, func(tx pgx.Tx) error { return fn(conn{tx}) })
}

func (s shared) Tx(ctx context.Context, fn func(storesql.Conn) error) error {
	return s.db.tx(ctx, func(tx pgx.Tx) error { return fn(conn{tx}) })
}

// connQuerier is what the pool and a transaction share.
type connQuerier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// conn adapts a pool or transaction to storesql.Conn, mapping errors.
type conn struct{ q connQuerier }

func (c conn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := c.q.Exec(ctx, query, args...)
	if err != nil {
		return 0, connErr(err)
	}
	return tag.RowsAffected(), nil
}

func (c conn) Query(ctx context.Context, query string, args ...any) (storesql.Rows, error) {
	rows, err := c.q.Query(ctx, query, args...)
	if err != nil {
		return nil, connErr(err)
	}
	return pgRows{rows}, nil
}

func (c conn) QueryRow(ctx context.Context, query string, args ...any) storesql.Row {
	return pgRow{c.q.QueryRow(ctx, query, args...)}
}

type pgRow struct{ r pgx.Row }

func (r pgRow) Scan(dest ...any) error { return connErr(r.r.Scan(dest...)) }

type pgRows struct{ r pgx.Rows }

func (r pgRows) Next() bool             { return r.r.Next() }
func (r pgRows) Scan(dest ...any) error { return connErr(r.r.Scan(dest...)) }
func (r pgRows) Err() error             { return connErr(r.r.Err()) }
func (r pgRows) Close()                 { r.r.Close() }

// utcTime scans a TIMESTAMPTZ column into a UTC time.
type utcTime struct{ dst *time.Time }

func (u utcTime) ScanTimestamptz(v pgtype.Timestamptz) error {
	if !v.Valid {
		return errors.New("NULL in a NOT NULL time column")
	}
	*u.dst = v.Time.UTC()
	return nil
}

// nullUTCTime is utcTime for a nullable column.
type nullUTCTime struct{ dst **time.Time }

func (u nullUTCTime) ScanTimestamptz(v pgtype.Timestamptz) error {
	if !v.Valid {
		*u.dst = nil
		return nil
	}
	t := v.Time.UTC()
	*u.dst = &t
	return nil
}

// connErr maps a driver error for the shared queries.
func connErr(err error) error { return storesql.MapErr(err, mapErr, isForeignKey) }

func (shared) Contains(hay, needle string) string { return "strpos(" + hay + ", " + needle + ") > 0" }
func (shared) ForUpdate(of ...string) string {
	if len(of) == 0 {
		return " FOR UPDATE"
	}
	return " FOR UPDATE OF " + strings.Join(of, ", ")
}

// InventoryHasVendor: @> narrows through the GIN index; the EXISTS keeps
// only snapshots that list devices (devices may be JSON null, hence the CASE).
func (shared) InventoryHasVendor(v string) string {
	return `inventory @> jsonb_build_array(jsonb_build_object('vendor', ` + v + `::text))
		AND EXISTS (SELECT 1 FROM jsonb_array_elements(nodes.inventory) e WHERE e->>'vendor' = ` + v + `::text
		AND CASE WHEN jsonb_typeof(e->'devices') = 'array' THEN jsonb_array_length(e->'devices') ELSE 0 END > 0)`
}

func (shared) Bytewise(col string) string { return col + ` COLLATE "C"` }

// JSONText is parenthesised: ->> binds no tighter than ||.
func (shared) JSONText(col, key string) string { return "(" + col + "::jsonb->>'" + key + "')" }

func (shared) ByteLength(expr string) string { return "octet_length(" + expr + ")" }

func (shared) LockTable(table, mode string) string {
	return "LOCK TABLE " + table + " IN " + mode + " MODE"
}

// LabelsContain: jsonb containment, GIN-indexed.
func (shared) LabelsContain(a *storeutil.Args, col string, labels map[string]string) ([]string, error) {
	js, err := storeutil.LabelsJSON(labels)
	if err != nil {
		return nil, err
	}
	return []string{col + " @> " + a.Add(js) + "::jsonb"}, nil
}

func (s shared) TransitionTx(ctx context.Context, c storesql.Conn, tr controlplane.Transition) (*controlplane.Task, error) {
	tx, ok := c.(conn).q.(pgx.Tx)
	if !ok {
		return nil, errors.New("postgres: task transition outside a transaction")
	}
	return s.db.transitionTx(ctx, tx, tr)
}

func (s shared) InsertWorkflowSteps(ctx context.Context, c storesql.Conn, id int64, steps []*controlplane.WorkflowStep, now time.Time) error {
	tx, ok := c.(conn).q.(pgx.Tx)
	if !ok {
		return errors.New("postgres: workflow steps outside a transaction")
	}
	return insertWorkflowSteps(ctx, tx, id, steps, now)
}
