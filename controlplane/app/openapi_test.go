package app

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane/server"
)

// openapiDoc is the part of the OpenAPI document the route walk reads.
type openapiDoc struct {
	Paths map[string]map[string]struct {
		OperationID string `json:"operationId"`
		Responses   map[string]struct {
			Content map[string]struct {
				Schema json.RawMessage `json:"schema"`
			} `json:"content"`
		} `json:"responses"`
	} `json:"paths"`
}

// TestEveryRouteIsInOpenAPI walks the router's route table and fails for any
// endpoint the OpenAPI document does not describe, so a new route cannot
// land undocumented. Mounted subtrees (the Prometheus query API) must have
// their endpoints documented under their prefix.
func TestEveryRouteIsInOpenAPI(t *testing.T) {
	s := startServerWith(t, t.TempDir(), func(c *server.Config) { c.Hub.Enabled = true }) // hub routes too
	var doc openapiDoc
	s.ok(http.StatusOK, http.MethodGet, "/api/v1/openapi.json", "", nil, &doc)

	// The document itself is the one route it cannot describe.
	self := "GET /api/v1/openapi.json"
	var missing []string
	for _, r := range s.app.API().Routes() {
		key := r.Method + " " + r.Path
		if key == self {
			continue
		}
		if r.Method == "*" {
			prefix := strings.TrimSuffix(r.Path, "/*")
			found := false
			for p := range doc.Paths {
				if strings.HasPrefix(p, prefix+"/") {
					found = true
					break
				}
			}
			if !found {
				missing = append(missing, key)
			}
			continue
		}
		ops, ok := doc.Paths[r.Path]
		if !ok {
			missing = append(missing, key)
			continue
		}
		op, ok := ops[strings.ToLower(r.Method)]
		if !ok || op.OperationID == "" {
			missing = append(missing, key)
			continue
		}
		hasSuccess := false
		for code := range op.Responses {
			// A browser-navigation route (single sign-on) succeeds with a redirect.
			if strings.HasPrefix(code, "2") || strings.HasPrefix(code, "3") {
				hasSuccess = true
			}
		}
		if !hasSuccess {
			missing = append(missing, key+" (no success response)")
		}
	}
	require.Empty(t, missing, "routes missing from the OpenAPI document")

	// Operation ids are unique: generated clients name methods after them.
	seen := map[string]string{}
	for p, ops := range doc.Paths {
		for m, op := range ops {
			if prev, dup := seen[op.OperationID]; dup {
				t.Errorf("operationId %q used by %s and %s %s", op.OperationID, prev, m, p)
			}
			seen[op.OperationID] = m + " " + p
		}
	}
}
