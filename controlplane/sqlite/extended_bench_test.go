package sqlite_test

import (
	"testing"

	"github.com/heteroflow/heteroflow/controlplane/storetest"
)

// go test -run '^$' -bench 'Bind|ApplyNodeStatus|RenewLease' ./controlplane/sqlite/
func BenchmarkBindTasks(b *testing.B)       { storetest.BenchmarkBindTasks(b, openTest(b), 2) }
func BenchmarkApplyNodeStatus(b *testing.B) { storetest.BenchmarkApplyNodeStatus(b, openTest(b)) }
func BenchmarkRenewLease(b *testing.B)      { storetest.BenchmarkRenewLease(b, openTest(b)) }
