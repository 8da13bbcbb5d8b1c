package server

import "testing"

// freshPostgres isolates a test in its own database.
func freshPostgres(t *testing.T, dsn string) string {
	t.Skip("postgres store not wired yet")
	return dsn
}
