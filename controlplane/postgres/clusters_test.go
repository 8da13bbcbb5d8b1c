package postgres_test

import (
	"testing"

	"github.com/heteroflow/heteroflow/controlplane/postgres/pgtest"
	"github.com/heteroflow/heteroflow/controlplane/storetest"
)

func TestClusterConformance(t *testing.T) {
	storetest.RunClusters(t, func(t *testing.T) storetest.ClusterStore { return pgtest.Open(t) })
}
