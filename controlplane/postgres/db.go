package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storesql"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// Options tune a DB; the zero value is usable.
type Options struct {
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// MaxConns caps the pool unless the DSN sets pool_max_conns; 0 means
	// max(8, 4×GOMAXPROCS): enough in-flight statements to hide network
	// latency without overloading a small server. On 2 cores that is 8:
	// submissions and audit batches hold at most WriteWorkers (2) of them
	// however many callers wait, which leaves 6 for reads and the
	// scheduler — near PostgreSQL's own rule of thumb of about two active
	// connections per core, plus some that wait on I/O.
	MaxConns int32
	// WriteWorkers is how many group-commit batches (task submissions and
	// audit batches, writes.go) may be in flight at once; 0 means 2. Each
	// holds one pool connection while it runs, so it is capped at
	// MaxConns/2 to leave the rest to reads and other writes.
	WriteWorkers int
}

// DB is a controlplane.Store backed by a PostgreSQL connection pool.
type DB struct {
	// Queries are the methods whose SQL both stores share (storesql).
	storesql.Queries
	pool  *pgxpool.Pool
	log   *slog.Logger
	nowFn func() time.Time
	// dbClock: no clock was injected, so leases compare expiries with the
	// database server's clock, the one clock every server sharing it agrees
	// on (leases.go).
	dbClock   bool
	closeOnce sync.Once
	// writes batches concurrent task submissions and audit batches into
	// one statement per commit (writes.go).
	writes *storeutil.GroupCommit[writeUnit]
	// auth carries credential changes between servers (auth_feed.go).
	auth authFeed
}

var _ controlplane.Store = (*DB)(nil)

// Open connects to dsn (postgres://…), applies pending migrations and
// returns the store. ErrUnavailable when the server cannot be reached.
func Open(ctx context.Context, dsn string, opts Options) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, controlplane.Invalidf("postgres: bad connection string: %v", err)
	}
	if !strings.Contains(dsn, "pool_max_conns") {
		cfg.MaxConns = opts.MaxConns
		if cfg.MaxConns <= 0 {
			cfg.MaxConns = int32(max(8, 4*runtime.GOMAXPROCS(0)))
		}
	}
	db := &DB{log: opts.Logger, nowFn: opts.Now, dbClock: opts.Now == nil}
	db.Queries = storesql.New(shared{db})
	if db.log == nil {
		db.log = slog.New(slog.DiscardHandler)
	}
	if db.nowFn == nil {
		db.nowFn = time.Now
	}
	if db.pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		return nil, fmt.Errorf("postgres: %w", mapErr(err))
	}
	if err := db.pool.Ping(ctx); err != nil {
		db.pool.Close()
		return nil, fmt.Errorf("postgres: connect %s:%d: %w", cfg.ConnConfig.Host, cfg.ConnConfig.Port, mapErr(err))
	}
	if err := migrate(ctx, db.pool, db.log); err != nil {
		db.pool.Close()
		return nil, err
	}
	workers := opts.WriteWorkers
	if workers <= 0 {
		workers = defaultWriteWorkers
	}
	workers = max(1, min(workers, int(cfg.MaxConns)/2))
	db.writes = storeutil.NewGroupCommit(maxWriteBatch, workers, db.writeUnits)
	db.log.Info("postgres store open", "host", cfg.ConnConfig.Host, "database", cfg.ConnConfig.Database,
		"max_conns", cfg.MaxConns, "write_workers", workers)
	return db, nil
}

// Ping checks the database answers.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.pool.Ping(ctx); err != nil {
		return fmt.Errorf("postgres ping: %w", mapErr(err))
	}
	return nil
}

// Close waits for in-flight group-commit batches, then closes the pool. It is safe
// to call more than once.
func (db *DB) Close() error {
	db.closeOnce.Do(func() {
		db.stopAuthFeed()
		db.writes.Close()
		db.pool.Close()
	})
	return nil
}

func (db *DB) now() time.Time { return storeutil.Trunc(db.nowFn()) }

// tx runs fn in a transaction: begin, deferred rollback, commit.
func (db *DB) tx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("postgres begin: %w", mapErr(err))
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("postgres commit: %w", mapErr(err))
	}
	return nil
}

// readTx runs fn in a repeatable-read, read-only transaction so that a page
// and its total come from one snapshot.
func (db *DB) readTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	tx, err := db.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return fmt.Errorf("postgres begin read: %w", mapErr(err))
	}
	defer func() { _ = tx.Rollback(ctx) }()
	return fn(tx)
}
