package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"log/slog"

	"github.com/pressly/goose/v3"
)

//go:embed migrations/*.sql
var migrations embed.FS

// migrate applies every pending embedded migration. It runs on the writer
// connection, so nothing else writes meanwhile within this process; another
// process opening the same file waits on SQLite's own lock.
func migrate(ctx context.Context, db *sql.DB, log *slog.Logger) error {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return fmt.Errorf("sqlite migrations: %w", err)
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, db, sub,
		goose.WithDisableGlobalRegistry(true), goose.WithSlog(log))
	if err != nil {
		return fmt.Errorf("sqlite migrations: %w", err)
	}
	res, err := p.Up(ctx)
	if err != nil {
		return fmt.Errorf("sqlite migrate up: %w", mapErr(err))
	}
	for _, r := range res {
		log.Info("sqlite migration applied", "version", r.Source.Version, "duration", r.Duration)
	}
	return nil
}
