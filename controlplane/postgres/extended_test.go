package postgres_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/postgres"
	"github.com/heteroflow/heteroflow/controlplane/postgres/pgtest"
	"github.com/heteroflow/heteroflow/controlplane/storetest"
)

func TestExtendedConformance(t *testing.T) {
	storetest.RunExtended(t, func(t *testing.T) storetest.FullStore { return pgtest.Open(t) })
}

// twoPools opens two pools on one new schema, as two servers sharing one
// PostgreSQL would.
func twoPools(t *testing.T) (a, b *postgres.DB) {
	dsn := pgtest.Schema(t)
	var dbs [2]*postgres.DB
	for i := range dbs {
		db, err := postgres.Open(context.Background(), dsn, postgres.Options{MaxConns: 8})
		require.NoError(t, err)
		t.Cleanup(func() { _ = db.Close() })
		dbs[i] = db
	}
	return dbs[0], dbs[1]
}

// TestLeaseHolders opens two pools on one schema, as two servers sharing
// one PostgreSQL would; expiries use the database's clock.
func TestLeaseHolders(t *testing.T) {
	storetest.RunLeaseHolders(t, func(t *testing.T) (a, b controlplane.SchedulingStore) { return twoPools(t) })
}

func TestBillingConformance(t *testing.T) {
	storetest.RunBilling(t, func(t *testing.T) storetest.BillingStore { return pgtest.Open(t) })
}

// TestNodeInventoryAcrossHandles opens two pools on one schema, as two
// servers sharing one PostgreSQL.
func TestNodeInventoryAcrossHandles(t *testing.T) {
	storetest.RunNodeInventoryAcrossHandles(t, func(t *testing.T) (a, b storetest.FullStore) { return twoPools(t) })
}
