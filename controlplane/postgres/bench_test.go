package postgres_test

import (
	"fmt"
	"testing"

	"github.com/heteroflow/heteroflow/controlplane/postgres/pgtest"
	"github.com/heteroflow/heteroflow/controlplane/storetest"
)

// HETEROFLOW_TEST_PG_DSN=… go test -run '^$' -bench . ./controlplane/postgres/
func BenchmarkCreateTask(b *testing.B) {
	for _, par := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("par=%d", par), func(b *testing.B) {
			storetest.BenchmarkCreateTask(b, pgtest.Open(b), par)
		})
	}
}

func BenchmarkTransition(b *testing.B) {
	storetest.BenchmarkTransition(b, pgtest.Open(b), 8)
}
