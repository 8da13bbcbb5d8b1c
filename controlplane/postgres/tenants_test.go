package postgres_test

import (
	"testing"

	"github.com/heteroflow/heteroflow/controlplane/postgres/pgtest"
	"github.com/heteroflow/heteroflow/controlplane/storetest"
)

func TestTenantConformance(t *testing.T) {
	storetest.RunTenants(t, func(t *testing.T) storetest.TenantStore { return pgtest.Open(t) })
}
