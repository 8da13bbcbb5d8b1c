package postgres

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

//go:embed migrations/*.sql
var migrations embed.FS

// migrate applies every pending embedded migration. goose needs a
// database/sql handle; stdlib wraps the same pool (and so the same
// search_path and credentials). A session advisory lock makes servers that
// start together apply each migration once.
func migrate(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger) error {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return fmt.Errorf("postgres migrations: %w", err)
	}
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return fmt.Errorf("postgres migrations: %w", err)
	}
	sqlDB := stdlib.OpenDBFromPool(pool)
	defer sqlDB.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, sqlDB, sub,
		goose.WithDisableGlobalRegistry(true), goose.WithSessionLocker(locker), goose.WithSlog(log))
	if err != nil {
		return fmt.Errorf("postgres migrations: %w", err)
	}
	res, err := p.Up(ctx)
	if err != nil {
		return fmt.Errorf("postgres migrate up: %w", mapErr(err))
	}
	for _, r := range res {
		log.Info("postgres migration applied", "version", r.Source.Version, "duration", r.Duration)
	}
	return nil
}
