package sqlite_test

import (
	"fmt"
	"testing"

	"github.com/heteroflow/heteroflow/controlplane/storetest"
)

// go test -run '^$' -bench . ./controlplane/sqlite/
func BenchmarkCreateTask(b *testing.B) {
	for _, par := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("par=%d", par), func(b *testing.B) {
			storetest.BenchmarkCreateTask(b, openTest(b), par)
		})
	}
}

func BenchmarkTransition(b *testing.B) {
	storetest.BenchmarkTransition(b, openTest(b), 8)
}
