package app

import (
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
)

// TestServerMetricsScopedToTenants: the server's own /metrics carries
// per-tenant series (billing usage, budgets, failed task names, queue
// ages); a member of one tenant reads only its tenant's series there, as
// through /prometheus, while an operator reads them all.
func TestServerMetricsScopedToTenants(t *testing.T) {
	s := startServer(t, t.TempDir())
	admin := s.adminToken()
	_, ann := s.userWithRoleTenant(admin, "ann", "user", "acme")
	_, ops := s.userWithRole(admin, "ops1", "operator")

	probe := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "heteroflow_scope_selfprobe", Help: "test"}, []string{"tenant", "task_name"})
	require.NoError(t, s.app.Server().API().Registry().Register(probe))
	probe.WithLabelValues("acme", "acme-train").Set(1)
	probe.WithLabelValues("globex", "globex-secret-merger").Set(1)
	probe.WithLabelValues("", "platform").Set(1)

	r := s.do(http.MethodGet, "/metrics", ann, nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	body := string(r.Body)
	require.True(t, strings.Contains(body, `heteroflow_scope_selfprobe{task_name="acme-train",tenant="acme"} 1`), "the member's own tenant series")
	require.False(t, strings.Contains(body, "globex"), "another tenant's series")
	require.False(t, strings.Contains(body, `task_name="platform"`), "a series of no tenant")
	require.False(t, strings.Contains(body, "heteroflow_http_requests_total"), "the server's untenanted series")

	r = s.do(http.MethodGet, "/metrics", ops, nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	require.True(t, strings.Contains(string(r.Body), "globex-secret-merger"))
	require.True(t, strings.Contains(string(r.Body), `task_name="platform"`))
}
