package sqlite_test

import (
	"testing"

	"github.com/heteroflow/heteroflow/controlplane/storetest"
)

func TestTenantConformance(t *testing.T) {
	storetest.RunTenants(t, func(t *testing.T) storetest.TenantStore { return openTest(t) })
}
