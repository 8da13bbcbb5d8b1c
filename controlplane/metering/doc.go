// Package metering turns the allocation ledger into usage and usage into
// cost: usage metering, the price book, reports and exports, closed
// monthly statements and budgets. It reads the ledger through the store and
// never reaches into the scheduler.
//
//	ledger row (bind) ──release──▶ allocation interval (allocation_history,
//	   │ same transaction as the delete)
//	   ▼
//	meter (leader only, lease "metering"): interval ─split at UTC midnight─▶
//	   usage records keyed (interval, day): written once, never twice
//	   ▼                                  └──▶ Prometheus counters
//	reports = records ∪ not yet metered parts (same split) × price book
//	   ▼
//	JSON / CSV / XLSX, monthly statement (snapshot, immutable once closed)
//
// Quantities. One interval is one task attempt on one device slice from
// bind to release, at millisecond grain (bind and release are truncated to
// the millisecond, so the records of an interval add up to it exactly). A
// slice's share of its device is the larger of its memory share and its
// compute share (the dominant share: a slice that holds 3/4 of a card's
// memory keeps others off the card however little it computes). Usage is
// then device-hours × share, GiB-hours of device memory held and
// compute-%-hours (one whole device for one hour = 100).
//
// Idempotence. A released interval is written to allocation_history in the
// transaction that deletes the ledger row, so none is lost across restarts.
// Records are keyed (interval, day) and inserted with ON CONFLICT DO
// NOTHING; an interval is marked metered in the same transaction. A meter
// that restarts, or a new leader after failover, writes nothing twice.
// Days of a still-held slice are recorded once the day has ended, so a
// month can be closed while long tasks run on.
package metering
