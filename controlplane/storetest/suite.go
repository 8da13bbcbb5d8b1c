package storetest

import (
	"context"
	"testing"

	"github.com/heteroflow/heteroflow/controlplane"
)

// Opener returns a fresh, empty store and registers its Close with t.Cleanup.
type Opener func(t *testing.T) controlplane.Store

// Hostile strings every text column must store and return verbatim.
var Hostile = []string{
	"'; DROP TABLE tasks; --",
	`" OR 1=1 --`,
	"<img src=x onerror=alert(1)>",
	"<script>alert('x')</script>",
	"中文任务名称",
	"emoji 🚀 and NUL-free \t tab",
	`back\slash 100% _under_`,
}

// Run runs the whole conformance suite against the stores open returns.
func Run(t *testing.T, open Opener) {
	groups := []struct {
		name string
		run  func(t *testing.T, open Opener)
	}{
		{"Lifecycle", testLifecycle},
		{"Users", testUsers},
		{"ExternalUsers", testExternalUsers},
		{"Bounds", testBounds},
		{"ListUsers", testListUsers},
		{"RefreshTokens", testRefreshTokens},
		{"APIKeys", testAPIKeys},
		{"Tasks", testTasks},
		{"SubmitKeys", testSubmitKeys},
		{"Transitions", testTransitions},
		{"ListTasks", testListTasks},
		{"Audit", testAudit},
		{"Settings", testSettings},
		{"Hostile", testHostile},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			g.run(t, open)
		})
	}
}

func ctx(t *testing.T) context.Context { return t.Context() }
