package postgres_test

import (
	"testing"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/postgres/pgtest"
	"github.com/heteroflow/heteroflow/controlplane/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) controlplane.Store { return pgtest.Open(t) })
}
