package server

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/sqlite"
)

// openStore opens the store the DSN names.
func openStore(ctx context.Context, dsn, dataDir string, log *slog.Logger) (controlplane.Store, error) {
	switch {
	case dsn == "":
		return sqlite.Open(ctx, filepath.Join(dataDir, "heteroflow.db"), sqlite.Options{Logger: log})
	case strings.HasPrefix(dsn, "sqlite://"):
		return sqlite.Open(ctx, strings.TrimPrefix(dsn, "sqlite://"), sqlite.Options{Logger: log})
	}
	return nil, fmt.Errorf("store %s: PostgreSQL support is not wired yet", redactDSN(dsn))
}
