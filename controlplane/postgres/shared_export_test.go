package postgres

import "github.com/heteroflow/heteroflow/controlplane/internal/storesql"

// Shared is what the store lends the shared queries (tests only).
func Shared(db *DB) storesql.DB { return shared{db} }
