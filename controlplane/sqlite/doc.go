// Package sqlite implements controlplane.Store on modernc.org/sqlite (pure
// Go, no cgo): HeteroFlow's embedded default store.
//
// The database runs in WAL mode with synchronous=NORMAL (a crash of the
// process never loses a committed transaction; a power loss may lose the last
// few), busy_timeout and foreign keys on. Writes go through a pool of exactly
// one connection and open their transactions with BEGIN IMMEDIATE, so writers
// queue in Go instead of failing with SQLITE_BUSY; reads use a separate pool
// of query-only connections that WAL lets run beside the writer.
//
// The schema is created and upgraded at Open by goose from the embedded
// migrations/ directory. Times are stored as INTEGER unix microseconds in UTC.
//
// Lists are ordered newest first (tasks, audit, API keys) except users, which
// are ordered by id. Time-range filters are half-open: [after, before).
package sqlite
