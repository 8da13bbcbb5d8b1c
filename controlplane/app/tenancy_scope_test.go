package app

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/agent/protocol"
	"github.com/heteroflow/heteroflow/controlplane"
)

// TestAlertsAndMetricsScopedToTenants: a member of tenant acme never sees
// tenant globex's alerts, rules, silences or series through any alert or
// PromQL route; an operator sees both.
func TestAlertsAndMetricsScopedToTenants(t *testing.T) {
	s := startServer(t, t.TempDir())
	admin := s.adminToken()
	_, ann := s.userWithRoleTenant(admin, "ann", "user", "acme")
	_, gil := s.userWithRoleTenant(admin, "gil", "user", "globex")
	_, ops := s.userWithRole(admin, "ops1", "operator")

	// A node dedicated to acme (its pool) beside the shared node shared-1.
	s.ok(http.StatusOK, http.MethodPatch, "/api/v1/tenants/acme", admin, map[string]any{"node_selector": map[string]string{"pool": "acme"}}, nil)
	_, tok := s.bootstrapToken(admin)
	body := enrollBody(tok, "acme-gpu", "nvidia", 1)
	body.Labels = map[string]string{"pool": "acme"}
	var enrolled protocol.EnrollResponse
	s.ok(http.StatusCreated, http.MethodPost, "/api/v1/agents/enroll", "", body, &enrolled)
	poolNode := enrolled.NodeID

	// Series: one per tenant, and a device series of a node no tenant owns.
	now := time.Now()
	s.appendEvery15s(t, now, 5, 1,
		labels.FromStrings("__name__", "heteroflow_scope_probe", "tenant", "acme"),
		labels.FromStrings("__name__", "heteroflow_scope_probe", "tenant", "globex"),
		labels.FromStrings("__name__", "hw_gpu_utilization_ratio", "host_name", "shared-1"),
		labels.FromStrings("__name__", "hw_gpu_utilization_ratio", "host_name", poolNode),
	)

	// Alerts: one of each tenant, one platform-wide about the shared node
	// and one platform-wide about acme's pool node.
	st := s.app.Server().Store().(controlplane.AlertStore)
	ids := map[string]int64{}
	for _, a := range []struct{ key, tenant, node string }{{"acme", "acme", "shared-1"}, {"globex", "globex", "shared-1"},
		{"", "", "shared-1"}, {"pool", "", poolNode}} {
		got, _, err := st.OpenAlert(t.Context(), &controlplane.AlertInstance{Fingerprint: "fp-" + a.key, Rule: "Probe", Tenant: a.tenant,
			Node: a.node, Level: controlplane.AlertWarn, Labels: map[string]string{"alertname": "Probe", "tenant": a.tenant, "host_name": a.node},
			ActiveAt: now, FiredAt: now}, nil)
		require.NoError(t, err)
		ids[a.key] = got.ID
	}
	var rule struct{ ID int64 }
	s.ok(http.StatusCreated, http.MethodPost, "/api/v1/alert-rules", admin,
		map[string]any{"name": "GlobexOnly", "expr": `heteroflow_scope_probe{tenant="globex"} > 0`, "level": "WARN", "tenant": "globex"}, &rule)
	for _, tenant := range []string{"acme", "globex"} {
		s.ok(http.StatusCreated, http.MethodPost, "/api/v1/alert-silences", admin, map[string]any{"tenant": tenant,
			"matchers": []map[string]string{{"name": "alertname", "op": "=", "value": "Probe"}}, "ends_at": now.Add(time.Hour)}, nil)
	}

	type alertList struct {
		Items []struct {
			ID     int64  `json:"id"`
			Tenant string `json:"tenant"`
		} `json:"items"`
		Total int `json:"total"`
	}
	var list alertList
	s.ok(http.StatusOK, http.MethodGet, "/api/v1/alerts", ann, nil, &list)
	require.Equal(t, 2, list.Total, "acme's alert and the platform-wide one about acme's pool node")
	for _, a := range list.Items {
		require.Contains(t, []int64{ids["acme"], ids["pool"]}, a.ID)
	}
	s.ok(http.StatusOK, http.MethodGet, "/api/v1/alerts", ops, nil, &list)
	require.Equal(t, 4, list.Total, "operators see every tenant's alerts and platform-wide ones")
	s.fails(http.StatusNotFound, "alert_not_found", http.MethodGet, fmt.Sprintf("/api/v1/alerts/%d", ids["globex"]), ann, nil)
	s.fails(http.StatusNotFound, "alert_not_found", http.MethodGet, fmt.Sprintf("/api/v1/alerts/%d", ids[""]), ann, nil)
	s.ok(http.StatusOK, http.MethodGet, fmt.Sprintf("/api/v1/alerts/%d", ids["globex"]), gil, nil, nil)
	s.fails(http.StatusForbidden, "tenant_forbidden", http.MethodGet, "/api/v1/alerts?tenant=globex", ann, nil)
	s.fails(http.StatusForbidden, "tenant_forbidden", http.MethodGet, "/api/v1/alerts/stats?tenant=globex", ann, nil)
	var stats struct{ Total int }
	s.ok(http.StatusOK, http.MethodGet, "/api/v1/alerts/stats", ann, nil, &stats)
	require.Equal(t, 2, stats.Total)

	var rules struct {
		Items []struct {
			ID     int64  `json:"id"`
			Tenant string `json:"tenant"`
		} `json:"items"`
	}
	s.ok(http.StatusOK, http.MethodGet, "/api/v1/alert-rules", ann, nil, &rules)
	for _, r := range rules.Items {
		require.NotEqual(t, "globex", r.Tenant)
	}
	s.fails(http.StatusNotFound, "alert_rule_not_found", http.MethodGet, fmt.Sprintf("/api/v1/alert-rules/%d", rule.ID), ann, nil)
	var silences struct {
		Items []struct{ Tenant string } `json:"items"`
	}
	s.ok(http.StatusOK, http.MethodGet, "/api/v1/alert-silences", ann, nil, &silences)
	require.Len(t, silences.Items, 1)
	require.Equal(t, "acme", silences.Items[0].Tenant)

	// Testing a rule reads only the caller's series, whatever it names.
	var tested struct {
		Alerts []struct {
			Labels map[string]string `json:"labels"`
		} `json:"alerts"`
	}
	s.ok(http.StatusOK, http.MethodPost, "/api/v1/alert-rules/test", ann,
		map[string]any{"name": "Escape", "expr": `{__name__=~"heteroflow_scope_probe|hw_gpu_utilization_ratio"} > 0`, "level": "WARN", "tenant": "acme"}, &tested)
	require.Len(t, tested.Alerts, 2, "acme's series and acme's pool node, nothing else")
	for _, a := range tested.Alerts {
		require.Equal(t, "acme", a.Labels["tenant"])
		require.Contains(t, []string{"", poolNode}, a.Labels["host_name"])
	}
	s.fails(http.StatusForbidden, "alert_rule_forbidden", http.MethodPost, "/api/v1/alert-rules/test", ann,
		map[string]any{"name": "Escape", "expr": `up`, "level": "WARN", "tenant": "globex"})

	// PromQL and the series APIs.
	query := func(cred, q string) string {
		r := s.do(http.MethodGet, "/prometheus/api/v1/query?"+url.Values{"query": {q}}.Encode(), cred, nil)
		require.Equal(t, http.StatusOK, r.Status, "%s: %s", q, r.Body)
		return string(r.Body)
	}
	for _, q := range []string{`{__name__=~".+"}`, `heteroflow_scope_probe{tenant="globex"}`, `label_replace({__name__=~"heteroflow_scope_probe"}, "tenant", "acme", "", "")`,
		`max_over_time({__name__=~".+"}[1m:15s])`, `heteroflow_scope_probe unless heteroflow_scope_probe{tenant="acme"}`} {
		body := query(ann, q)
		require.NotContains(t, body, "globex", q)
		require.NotContains(t, body, "shared-1", "a node not dedicated to acme: %s", q)
	}
	require.Contains(t, query(ann, `heteroflow_scope_probe`), `"tenant":"acme"`)
	require.Contains(t, query(ann, `hw_gpu_utilization_ratio`), poolNode, "the devices of acme's dedicated pool")
	require.Contains(t, query(ann, `count({__name__=~"heteroflow_scope_probe|hw_gpu_utilization_ratio"})`), `"2"`, "acme's task series and pool node, no more")
	all := query(ops, `heteroflow_scope_probe`)
	require.Contains(t, all, "globex")
	require.Contains(t, all, "acme")
	for _, path := range []string{"/prometheus/api/v1/series?match[]=" + url.QueryEscape(`{__name__=~".+"}`),
		"/prometheus/api/v1/label/tenant/values", "/prometheus/api/v1/label/host_name/values", "/prometheus/api/v1/labels",
		"/prometheus/api/v1/alerts", "/prometheus/api/v1/rules"} {
		r := s.do(http.MethodGet, path, ann, nil)
		require.Equal(t, http.StatusOK, r.Status, "%s: %s", path, r.Body)
		require.False(t, strings.Contains(string(r.Body), "globex") || strings.Contains(string(r.Body), "shared-1"), "%s: %s", path, r.Body)
	}
}

// appendEvery15s writes each series into the embedded TSDB: n samples of
// value, 15 s apart, the last at now.
func (s *testServer) appendEvery15s(t *testing.T, now time.Time, n int, value float64, series ...labels.Labels) {
	t.Helper()
	app := s.app.Server().Metrics().Appendable().AppenderV2(context.Background())
	for _, ls := range series {
		for i := n - 1; i >= 0; i-- {
			_, err := app.Append(0, ls, 0, now.Add(-time.Duration(i)*15*time.Second).UnixMilli(), value, nil, nil, storage.AOptions{})
			require.NoError(t, err)
		}
	}
	require.NoError(t, app.Commit())
}
