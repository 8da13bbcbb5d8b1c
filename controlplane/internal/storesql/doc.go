// Package storesql holds the SQL both Store implementations share, written
// once: every statement whose text is the same in SQLite and PostgreSQL, the
// row scanning that goes with it, and the store methods built from them.
//
// Statements use PostgreSQL's numbered placeholders ($1, $2, …), which
// modernc.org/sqlite binds by number too (a "$NNN" parameter takes the
// NNN-th argument), so one text serves both drivers unchanged. What the
// dialects store differently goes through Dialect: times (INTEGER unix
// microseconds in SQLite, TIMESTAMPTZ in PostgreSQL) and case-insensitive
// matching (LIKE / ILIKE). Errors come back already mapped to the domain's
// sentinels by each store's Conn adapter.
//
// A store embeds Queries in its DB, so the methods here implement its part
// of controlplane.Store; a method the store defines itself (an upsert,
// FOR UPDATE SKIP LOCKED, a JSON operator, a bulk unnest) takes precedence.
// Where a new query goes: here when its text is the same in both dialects,
// in controlplane/sqlite and controlplane/postgres when it must differ.
//
// It imports no database driver.
package storesql
