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

	// Series: one per tenant, and a device series of a node no tenant owns.
	now := time.Now()
	app := s.app.Server().Metrics().Appendable().AppenderV2(context.Background())
	for _, ls := range []labels.Labels{
		labels.FromStrings("__name__", "heteroflow_scope_probe", "tenant", "acme"),
		labels.FromStrings("__name__", "heteroflow_scope_probe", "tenant", "globex"),
		labels.FromStrings("__name__", "hw_gpu_utilization_ratio", "host_name", "shared-1"),
	} {
		for i := 4; i >= 0; i-- {
			_, err := app.Append(0, ls, 0, now.Add(-time.Duration(i)*15*time.Second).UnixMilli(), 1, nil, nil, storage.AOptions{})
			require.NoError(t, err)
		}
	}
	require.NoError(t, app.Commit())

	// Alerts: one of each tenant and one platform-wide.
	st := s.app.Server().Store().(controlplane.AlertStore)
	ids := map[string]int64{}
	for _, tenant := range []string{"acme", "globex", ""} {
		a, _, err := st.OpenAlert(t.Context(), &controlplane.AlertInstance{Fingerprint: "fp-" + tenant, Rule: "Probe", Tenant: tenant,
			Node: "shared-1", Level: controlplane.AlertWarn, Labels: map[string]string{"alertname": "Probe", "tenant": tenant},
			ActiveAt: now, FiredAt: now}, nil)
		require.NoError(t, err)
		ids[tenant] = a.ID
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
	require.Equal(t, 1, list.Total)
	require.Equal(t, "acme", list.Items[0].Tenant)
	s.ok(http.StatusOK, http.MethodGet, "/api/v1/alerts", ops, nil, &list)
	require.Equal(t, 3, list.Total, "operators see every tenant's alerts and platform-wide ones")
	s.fails(http.StatusNotFound, "alert_not_found", http.MethodGet, fmt.Sprintf("/api/v1/alerts/%d", ids["globex"]), ann, nil)
	s.fails(http.StatusNotFound, "alert_not_found", http.MethodGet, fmt.Sprintf("/api/v1/alerts/%d", ids[""]), ann, nil)
	s.ok(http.StatusOK, http.MethodGet, fmt.Sprintf("/api/v1/alerts/%d", ids["globex"]), gil, nil, nil)
	s.fails(http.StatusForbidden, "tenant_forbidden", http.MethodGet, "/api/v1/alerts?tenant=globex", ann, nil)
	s.fails(http.StatusForbidden, "tenant_forbidden", http.MethodGet, "/api/v1/alerts/stats?tenant=globex", ann, nil)
	var stats struct{ Total int }
	s.ok(http.StatusOK, http.MethodGet, "/api/v1/alerts/stats", ann, nil, &stats)
	require.Equal(t, 1, stats.Total)

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
	require.Len(t, tested.Alerts, 1)
	require.Equal(t, "acme", tested.Alerts[0].Labels["tenant"])
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
