package storeopen

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/postgres"
	"github.com/heteroflow/heteroflow/controlplane/sqlite"
)

// DefaultSQLiteFile is the database file name inside the data directory.
const DefaultSQLiteFile = "heteroflow.db"

// Kind names the backend a DSN selects.
type Kind string

const (
	KindSQLite   Kind = "sqlite"
	KindPostgres Kind = "postgres"
)

// Target is a parsed DSN: which backend, and its path or connection string.
type Target struct {
	Kind Kind
	// Path is the SQLite file; DSN the PostgreSQL connection string.
	Path string
	DSN  string
}

// Parse classifies dsn without opening anything.
func Parse(dsn, dataDir string) (Target, error) {
	d := strings.TrimSpace(dsn)
	lower := strings.ToLower(d)
	switch {
	case d == "" || lower == "sqlite":
		if dataDir == "" {
			dataDir = "."
		}
		return Target{Kind: KindSQLite, Path: filepath.Join(dataDir, DefaultSQLiteFile)}, nil
	case strings.HasPrefix(lower, "postgres://") || strings.HasPrefix(lower, "postgresql://"):
		return Target{Kind: KindPostgres, DSN: d}, nil
	case strings.HasPrefix(lower, "sqlite://"):
		return sqlitePath(d[len("sqlite://"):], dsn)
	case strings.HasPrefix(lower, "sqlite:"):
		return sqlitePath(d[len("sqlite:"):], dsn)
	case strings.Contains(d, "://"):
		return Target{}, badDSN(dsn)
	case looksLikePath(d):
		return Target{Kind: KindSQLite, Path: d}, nil
	}
	return Target{}, badDSN(dsn)
}

func sqlitePath(p, dsn string) (Target, error) {
	if p == "" {
		return Target{}, badDSN(dsn)
	}
	return Target{Kind: KindSQLite, Path: p}, nil
}

// looksLikePath accepts strings that name a file: they contain a path
// separator or end in a SQLite extension. A bare word such as "mysql" is
// more likely a mistake than a file name, so it is rejected.
func looksLikePath(s string) bool {
	if strings.ContainsRune(s, '/') || strings.ContainsRune(s, filepath.Separator) {
		return true
	}
	switch strings.ToLower(filepath.Ext(s)) {
	case ".db", ".sqlite", ".sqlite3":
		return true
	}
	return false
}

func badDSN(dsn string) error {
	return controlplane.Invalidf("unsupported database %q: use \"sqlite\" (default, file in the data directory), "+
		"a SQLite file path such as ./data/heteroflow.db, or postgres://user@host:5432/db "+
		"/ 不支持的数据库 %q：请使用 sqlite（默认）、SQLite 文件路径或 postgres:// 连接串", dsn, dsn)
}

// Open parses dsn and opens the store it names, applying migrations.
func Open(ctx context.Context, dsn, dataDir string, logger *slog.Logger) (controlplane.Store, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	t, err := Parse(dsn, dataDir)
	if err != nil {
		return nil, err
	}
	switch t.Kind {
	case KindPostgres:
		db, err := postgres.Open(ctx, t.DSN, postgres.Options{Logger: logger})
		if err != nil {
			return nil, fmt.Errorf("open postgres store: %w", err)
		}
		return db, nil
	default:
		db, err := sqlite.Open(ctx, t.Path, sqlite.Options{Logger: logger})
		if err != nil {
			return nil, fmt.Errorf("open sqlite store: %w", err)
		}
		return db, nil
	}
}
