package server

import (
	"testing"

	"github.com/heteroflow/heteroflow/controlplane/httpapi"
	"github.com/heteroflow/heteroflow/controlplane/postgres"
	"github.com/heteroflow/heteroflow/controlplane/postgres/pgtest"
	"github.com/heteroflow/heteroflow/controlplane/sqlite"
)

// freshPostgres isolates a test in its own schema (dropped at cleanup).
func freshPostgres(t *testing.T, _ string) string { return pgtest.Schema(t) }

// Both stores batch audit writes; the Auditor relies on it under load.
var (
	_ httpapi.AuditBatcher = (*sqlite.DB)(nil)
	_ httpapi.AuditBatcher = (*postgres.DB)(nil)
)
