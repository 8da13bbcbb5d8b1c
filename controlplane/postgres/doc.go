// Package postgres implements controlplane.Store on PostgreSQL through
// jackc/pgx/v5 (pgxpool), for deployments that outgrow the embedded SQLite
// store or run several servers on one database.
//
// The schema lives in embedded goose migrations (migrations/), applied at
// Open under a PostgreSQL advisory lock so that servers starting together do
// not race. Hot paths are single statements. CreateTask and the audit writes
// use group commit (writes.go): the submissions and audit entries waiting at
// one moment are inserted, tasks with their first events, by one statement
// over unnest()ed column arrays — one round trip and one WAL flush for all
// of them — and retried one by one if that statement fails, so a bad task
// fails only its own caller. TransitionTask does the guarded update and the
// event insert with one data-modifying CTE, atomic without an explicit
// transaction.
//
// Durability follows the server's settings. A DSN may add run-time
// parameters, e.g. postgres://…?synchronous_commit=off, which pgx passes to
// every connection: commits stop waiting for the WAL flush (several times the
// throughput on slow disks) at the price of losing the last acknowledged
// commits if the PostgreSQL host crashes; atomicity is unaffected.
//
// Lists are ordered newest first (tasks, audit, API keys) except users, which
// are ordered by id. Time-range filters are half-open: [after, before).
package postgres
