package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storesql"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// busyTimeout bounds how long a connection waits for a lock held by another
// process (within this process the single writer connection already queues
// writers). Five seconds covers a WAL checkpoint on a slow disk.
const busyTimeout = 5 * time.Second

// Options tune a DB; the zero value is usable.
type Options struct {
	Logger *slog.Logger
	// Now is the clock; nil means time.Now. Tests inject a fixed clock.
	Now func() time.Time
	// ReadConns is the size of the reader pool; 0 means max(4, 2×GOMAXPROCS).
	ReadConns int
}

// DB is a controlplane.Store backed by one SQLite file.
type DB struct {
	// Queries are the methods whose SQL both stores share (storesql).
	storesql.Queries
	path   string
	w      *sql.DB // exactly one connection: all writes
	r      *sql.DB // query-only connections: all reads
	log    *slog.Logger
	nowFn  func() time.Time
	closed chan struct{} // closed by Close
	// creates batches concurrent task submissions (tasks_create.go).
	creates *storeutil.GroupCommit[storeutil.NewTask]
}

var _ controlplane.Store = (*DB)(nil)

// Open opens (creating if needed) the database file at path, applies pending
// migrations and returns the store.
func Open(ctx context.Context, path string, opts Options) (*DB, error) {
	if path == "" {
		return nil, controlplane.Invalidf("sqlite: database path is required")
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("sqlite: create data directory: %w", err)
		}
	}
	if err := ownerOnly(path); err != nil {
		return nil, err
	}
	db := &DB{path: path, log: opts.Logger, nowFn: opts.Now, closed: make(chan struct{})}
	db.Queries = storesql.New(shared{db})
	if db.log == nil {
		db.log = slog.New(slog.DiscardHandler)
	}
	if db.nowFn == nil {
		db.nowFn = time.Now
	}
	var err error
	if db.w, err = sql.Open("sqlite", dsn(path, false)); err != nil {
		return nil, fmt.Errorf("sqlite: open writer: %w", err)
	}
	db.w.SetMaxOpenConns(1)
	db.w.SetMaxIdleConns(1)
	db.w.SetConnMaxLifetime(0)
	db.w.SetConnMaxIdleTime(0)
	// The writer creates the file and switches it to WAL before any reader
	// connects (a query-only connection cannot change the journal mode).
	if err := db.w.PingContext(ctx); err != nil {
		_ = db.w.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, mapErr(err))
	}
	if err := migrate(ctx, db.w, db.log); err != nil {
		_ = db.w.Close()
		return nil, err
	}
	if db.r, err = sql.Open("sqlite", dsn(path, true)); err != nil {
		_ = db.w.Close()
		return nil, fmt.Errorf("sqlite: open readers: %w", err)
	}
	n := opts.ReadConns
	if n <= 0 {
		n = max(4, 2*runtime.GOMAXPROCS(0))
	}
	db.r.SetMaxOpenConns(n)
	db.r.SetMaxIdleConns(n)
	db.creates = storeutil.NewGroupCommit(maxCreateBatch, createWorkers, db.insertTasks)
	db.log.Info("sqlite store open", "path", path, "read_conns", n)
	return db, nil
}

// dsn builds the modernc.org/sqlite connection string. Pragmas run on every
// new connection; _txlock=immediate makes BeginTx issue BEGIN IMMEDIATE so a
// write transaction takes the write lock up front instead of failing to
// upgrade a read lock later (the classic SQLITE_BUSY under load).
func dsn(path string, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	if readOnly {
		q.Add("_pragma", "query_only(1)")
		q.Set("_txlock", "deferred")
	} else {
		q.Add("_pragma", "journal_mode(WAL)")
		q.Set("_txlock", "immediate")
	}
	return "file:" + path + "?" + q.Encode()
}

// Path is the database file.
func (db *DB) Path() string { return db.path }

// Ping checks both pools can reach the file.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.r.PingContext(ctx); err != nil {
		return fmt.Errorf("sqlite ping: %w", mapErr(err))
	}
	var one int
	if err := db.r.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
		return fmt.Errorf("sqlite ping: %w", mapErr(err))
	}
	return nil
}

// Close closes both pools. It is safe to call more than once.
func (db *DB) Close() error {
	select {
	case <-db.closed:
		return nil
	default:
		close(db.closed)
	}
	db.creates.Close() // no write in flight when the pools close
	return errors.Join(db.r.Close(), db.w.Close())
}

// now is the injected clock at stored precision.
func (db *DB) now() time.Time { return storeutil.Trunc(db.nowFn()) }

// write runs fn in a BEGIN IMMEDIATE transaction on the writer connection.
func (db *DB) write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite begin: %w", mapErr(err))
	}
	defer func() { _ = tx.Rollback() }()
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite commit: %w", mapErr(err))
	}
	return nil
}

// read runs fn in a read transaction so that a page and its total come from
// one snapshot.
func (db *DB) read(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := db.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("sqlite begin read: %w", mapErr(err))
	}
	defer func() { _ = tx.Rollback() }()
	return fn(tx)
}

// ownerOnly creates the database file if needed and gives it (and the WAL
// and shared-memory files beside it, which SQLite creates with the
// database's mode) mode 0600: it holds password hashes, API key hashes and
// task secrets.
func ownerOnly(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("sqlite: create database file: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("sqlite: create database file: %w", err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Chmod(p, 0o600); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("sqlite: restrict %s to 0600: %w", p, err)
		}
	}
	return nil
}
