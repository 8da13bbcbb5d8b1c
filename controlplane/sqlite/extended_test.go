package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/sqlite"
	"github.com/heteroflow/heteroflow/controlplane/storetest"
)

func TestExtendedConformance(t *testing.T) {
	storetest.RunExtended(t, func(t *testing.T) storetest.FullStore { return openTest(t) })
}

// twoHandles opens one new database file twice, as two servers would.
func twoHandles(t *testing.T) (a, b *sqlite.DB) {
	path := filepath.Join(t.TempDir(), "shared.db")
	var dbs [2]*sqlite.DB
	for i := range dbs {
		db, err := sqlite.Open(t.Context(), path, sqlite.Options{})
		require.NoError(t, err)
		t.Cleanup(func() { _ = db.Close() })
		dbs[i] = db
	}
	return dbs[0], dbs[1]
}

// TestLeaseHolders opens the same file twice, as two servers would.
func TestLeaseHolders(t *testing.T) {
	storetest.RunLeaseHolders(t, func(t *testing.T) (a, b controlplane.SchedulingStore) { return twoHandles(t) })
}

func TestBillingConformance(t *testing.T) {
	storetest.RunBilling(t, func(t *testing.T) storetest.BillingStore { return openTest(t) })
}

// TestNodeInventoryAcrossHandles opens the same file twice, as two servers.
func TestNodeInventoryAcrossHandles(t *testing.T) {
	storetest.RunNodeInventoryAcrossHandles(t, func(t *testing.T) (a, b storetest.FullStore) { return twoHandles(t) })
}
