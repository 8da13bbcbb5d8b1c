package postgres_test

import (
	"testing"

	"github.com/heteroflow/heteroflow/controlplane/postgres/pgtest"
	"github.com/heteroflow/heteroflow/controlplane/storetest"
)

// HETEROFLOW_TEST_PG_DSN=… go test -run '^$' -bench 'Bind|ApplyNodeStatus|RenewLease' ./controlplane/postgres/
func BenchmarkBindTasks(b *testing.B)       { storetest.BenchmarkBindTasks(b, pgtest.Open(b), 2) }
func BenchmarkApplyNodeStatus(b *testing.B) { storetest.BenchmarkApplyNodeStatus(b, pgtest.Open(b)) }
func BenchmarkRenewLease(b *testing.B)      { storetest.BenchmarkRenewLease(b, pgtest.Open(b)) }
