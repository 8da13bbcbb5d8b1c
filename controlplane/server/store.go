package server

import (
	"context"
	"log/slog"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/storeopen"
)

// openStore opens the store the DSN names (see storeopen.Parse).
func openStore(ctx context.Context, dsn, dataDir string, log *slog.Logger) (controlplane.Store, error) {
	return storeopen.Open(ctx, dsn, dataDir, log)
}
