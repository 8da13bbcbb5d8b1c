// Package storeutil holds the small pieces both Store implementations
// (controlplane/sqlite and controlplane/postgres) share so that they behave
// identically: JSON column encoding of task specs, LIKE escaping, input
// checks done before any SQL runs, the clock, and the group-commit batcher
// that turns concurrent task submissions into one transaction.
//
// It imports no database driver.
package storeutil
