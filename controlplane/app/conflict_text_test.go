package app

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane/postgres/pgtest"
	"github.com/heteroflow/heteroflow/controlplane/server"
)

// TestConflictsNameNoSQL: a name already taken is a 409 whose message
// names the object, never the store's own text (tables, columns,
// constraint names, driver codes). Self-registration reaches it without
// an account. Both stores.
func TestConflictsNameNoSQL(t *testing.T) {
	for _, store := range []string{"sqlite", "postgres"} {
		t.Run(store, func(t *testing.T) {
			s := startServerWith(t, t.TempDir(), func(c *server.Config) {
				c.AllowRegistration = true
				if store == "postgres" {
					c.DB = pgtest.Schema(t)
				}
			})
			admin := s.adminToken()
			s.ok(http.StatusCreated, http.MethodPost, "/api/v1/tenants", admin, map[string]string{"name": "acme"}, nil)
			s.userWithRole(admin, "alice", "user")
			for _, c := range []struct {
				path, cred string
				body       any
			}{
				{"/api/v1/auth/register", "", map[string]string{"username": "alice", "password": testPassword}},
				{"/api/v1/users", admin, map[string]string{"username": "alice", "password": testPassword, "role": "user"}},
				{"/api/v1/tenants", admin, map[string]string{"name": "acme"}},
			} {
				r := s.do(http.MethodPost, c.path, c.cred, c.body)
				require.Equal(t, http.StatusConflict, r.Status, "%s: %s", c.path, r.Body)
				body := strings.ToLower(string(r.Body))
				for _, leak := range []string{"unique", "constraint", "users.", "tenants.", "2067", "23505", "duplicate key"} {
					require.NotContains(t, body, leak, "%s: %s", c.path, r.Body)
				}
				require.Contains(t, body, "already exists", c.path)
			}
		})
	}
}
