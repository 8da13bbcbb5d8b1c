package postgres_test

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/postgres"
	"github.com/heteroflow/heteroflow/controlplane/postgres/pgtest"
)

// TestTenantsMigrateFreeText: a database from before tenants were objects,
// with free-text tenants on users, tasks and quotas, comes out of the
// tenants migration with a tenant row per name, a project row per
// (tenant, project) and each user a member of their tenant.
func TestTenantsMigrateFreeText(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Schema(t)
	pool, err := pgxpool.New(ctx, dsn)
	require.NoError(t, err)
	raw := stdlib.OpenDBFromPool(pool)
	p, err := goose.NewProvider(goose.DialectPostgres, raw, os.DirFS("migrations"), goose.WithDisableGlobalRegistry(true))
	require.NoError(t, err)
	_, err = p.UpTo(ctx, 11)
	require.NoError(t, err)
	for _, q := range []string{
		`INSERT INTO users (username, role, status, tenant, created_at, updated_at) VALUES
			('ann', 'user', 'active', 'acme', now(), now()), ('vic', 'viewer', 'active', 'acme', now(), now()),
			('ops', 'operator', 'active', '', now(), now())`,
		`INSERT INTO tasks (name, qos, state, tenant, project, created_at, updated_at) VALUES
			('a', 'bronze', 'submitted', 'acme', 'vision', now(), now()), ('b', 'bronze', 'submitted', 'globex', '', now(), now()),
			('c', 'bronze', 'submitted', '', '', now(), now())`,
		`INSERT INTO quotas (tenant, project, vendor, policy, created_at, updated_at) VALUES
			('initech', 'tps', '', 'queue', now(), now())`,
	} {
		_, err := raw.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	require.NoError(t, raw.Close())
	pool.Close()

	db, err := postgres.Open(ctx, dsn, postgres.Options{MaxConns: 2})
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	tenants, err := db.ListTenants(ctx)
	require.NoError(t, err)
	var names []string
	for _, tn := range tenants {
		names = append(names, tn.Name)
	}
	require.Equal(t, []string{"acme", "globex", "initech"}, names)
	ps, err := db.ListProjects(ctx, "acme")
	require.NoError(t, err)
	require.Len(t, ps, 1)
	require.Equal(t, "vision", ps[0].Name)
	members, err := db.ListMembers(ctx, "acme")
	require.NoError(t, err)
	require.Len(t, members, 2)
	require.Equal(t, controlplane.TenantMemberRole, members[0].Role)
	require.Equal(t, controlplane.TenantViewerRole, members[1].Role)
}
