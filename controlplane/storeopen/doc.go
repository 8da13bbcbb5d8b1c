// Package storeopen picks and opens the controlplane.Store named by the
// server's --db setting, so that nothing above the store needs to know which
// databases exist:
//
//	""  or "sqlite"                       SQLite at <data dir>/heteroflow.db
//	"sqlite:<path>", "sqlite://<path>"    SQLite at <path>
//	a file path (…/x.db, x.sqlite, ./x)   SQLite at that path
//	"postgres://…" or "postgresql://…"    PostgreSQL
//
// Anything else is rejected with an error that lists the accepted forms.
package storeopen
