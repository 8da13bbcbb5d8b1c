// Package storetest is the conformance suite every controlplane.Store
// implementation runs from its own tests:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) controlplane.Store { return openTestStore(t) })
//	}
//
// open must return a fresh, empty, migrated store and register its Close with
// t.Cleanup. The suite covers every Store method, every sentinel error path,
// pagination and filter edge cases, racing transitions and rotations, and
// hostile strings (SQL injection, HTML/XSS, unicode) stored verbatim.
//
// Stores that also keep nodes and the scheduler's state run
// RunExtended (controlplane.NodeStore and controlplane.SchedulingStore:
// enrollment, heartbeats, assignments, exactly-once status, task logs, the
// allocation ledger, quotas, plugin settings, per-task schedule state,
// leases) and RunLeaseHolders, which opens two handles on one database, as
// two servers would, and checks there is one leader at a time.
//
// The package also carries the crash-consistency harness (crash.go): a child
// process writes a burst of tasks and transitions, is killed with SIGKILL,
// and the parent checks that the reopened store is consistent.
package storetest
