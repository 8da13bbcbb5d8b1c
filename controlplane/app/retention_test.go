package app

import (
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/server"
)

// TestServerPrunesAuditBeyondItsBound: the server's retention settings
// reach the pruner, which runs at start on the leader and counts what it
// removed in the server's own metrics.
func TestServerPrunesAuditBeyondItsBound(t *testing.T) {
	dir := t.TempDir()
	first := startServer(t, dir)
	st := first.app.Server().Store()
	for i := range 1500 {
		require.NoError(t, st.AppendAudit(t.Context(), &controlplane.AuditEntry{Actor: "bob", Module: controlplane.ModuleAPI,
			Level: controlplane.LevelInfo, Action: "retention.fill", Target: fmt.Sprintf("node/%d", i), Result: "ok"}))
	}
	first.stop()

	s := startServerWith(t, dir, func(c *server.Config) { c.Retention.AuditMaxRows = 1000 })
	admin := s.adminToken()
	var pruned float64
	require.Eventually(t, func() bool {
		r := s.do("GET", "/metrics", admin, nil)
		m := regexp.MustCompile(`heteroflow_retention_pruned_rows_total\{kind="audit"\} (\S+)`).FindSubmatch(r.Body)
		if m == nil {
			return false
		}
		pruned, _ = strconv.ParseFloat(string(m[1]), 64)
		return pruned >= 500
	}, 30*time.Second, 100*time.Millisecond)
	_, total, err := s.app.Server().Store().ListAudit(t.Context(), controlplane.AuditFilter{})
	require.NoError(t, err)
	require.LessOrEqual(t, total, 1000+20, "the bound holds, give or take the entries written since the pass")
	require.Regexp(t, `heteroflow_retention_pruned_bytes_total\{kind="audit"\} [1-9]`, string(s.do("GET", "/metrics", admin, nil).Body))
}
