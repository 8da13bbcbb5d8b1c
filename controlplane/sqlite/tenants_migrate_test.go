package sqlite

import (
	"context"
	"database/sql"
	"io/fs"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/pressly/goose/v3"
	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
)

// TestTenantsMigrateFreeText: a database from before tenants were objects,
// with free-text tenants on users, tasks and quotas, comes out of the
// tenants migration with a tenant row per name, a project row per
// (tenant, project) and each user a member of their tenant.
func TestTenantsMigrateFreeText(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(1)")
	require.NoError(t, err)
	sub, err := fs.Sub(migrations, "migrations")
	require.NoError(t, err)
	p, err := goose.NewProvider(goose.DialectSQLite3, raw, sub, goose.WithDisableGlobalRegistry(true))
	require.NoError(t, err)
	_, err = p.UpTo(ctx, 11)
	require.NoError(t, err)
	for _, q := range []string{
		`INSERT INTO users (username, role, status, tenant, created_at, updated_at) VALUES
			('ann', 'user', 'active', 'acme', 1, 1), ('vic', 'viewer', 'active', 'acme', 1, 1),
			('ops', 'operator', 'active', '', 1, 1)`,
		`INSERT INTO tasks (name, qos, state, tenant, project, created_at, updated_at) VALUES
			('a', 'bronze', 'submitted', 'acme', 'vision', 1, 1), ('b', 'bronze', 'submitted', 'globex', '', 1, 1),
			('c', 'bronze', 'submitted', '', '', 1, 1)`,
		`INSERT INTO quotas (tenant, project, vendor, policy, created_at, updated_at) VALUES
			('initech', 'tps', '', 'queue', 1, 1)`,
	} {
		_, err := raw.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	require.NoError(t, raw.Close())

	db, err := Open(ctx, path, Options{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	tenants, err := db.ListTenants(ctx)
	require.NoError(t, err)
	var names []string
	for _, tn := range tenants {
		names = append(names, tn.Name)
		require.False(t, tn.Disabled)
	}
	require.Equal(t, []string{"acme", "globex", "initech"}, names)
	ps, err := db.ListProjects(ctx, "acme")
	require.NoError(t, err)
	require.Len(t, ps, 1)
	require.Equal(t, "vision", ps[0].Name)
	ps, err = db.ListProjects(ctx, "initech")
	require.NoError(t, err)
	require.Len(t, ps, 1)
	members, err := db.ListMembers(ctx, "acme")
	require.NoError(t, err)
	require.Len(t, members, 2)
	require.Equal(t, "ann", members[0].Username)
	require.Equal(t, controlplane.TenantMemberRole, members[0].Role)
	require.Equal(t, controlplane.TenantViewerRole, members[1].Role)
}
