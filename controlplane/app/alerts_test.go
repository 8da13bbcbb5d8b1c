package app

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/alerts/rules"
	"github.com/heteroflow/heteroflow/controlplane"
)

// push writes one GPU utilisation sample of a simulated node into the
// server's metrics store (what the node's agent pushes).
func (s *testServer) push(host string, util float64, at time.Time) {
	s.t.Helper()
	require.NoError(s.t, s.tryPush(host, util, at))
}

// tryPush is push for background writers (no FailNow off the test goroutine).
func (s *testServer) tryPush(host string, util float64, at time.Time) error {
	app := s.app.Server().Metrics().Appendable().AppenderV2(context.Background())
	ls := labels.FromStrings("__name__", "hw_gpu_utilization_ratio", "host_name", host, "hw_index", "0", "hw_vendor", "nvidia")
	if _, err := app.Append(0, ls, 0, at.UnixMilli(), util, nil, nil, storage.AOptions{}); err != nil {
		_ = app.Rollback()
		return err
	}
	return app.Commit()
}

type ruleOut struct {
	ID      int64  `json:"id"`
	Origin  string `json:"origin"`
	Name    string `json:"name"`
	Expr    string `json:"expr"`
	Level   string `json:"level"`
	Tenant  string `json:"tenant"`
	Enabled bool   `json:"enabled"`
}

// TestAlertAPI walks the alert routes: rules with PromQL validation and
// "test now", parameters, channels (secrets masked), silences, the alert
// lifecycle by hand, statistics and Prometheus' rules and alerts API.
func TestAlertAPI(t *testing.T) {
	s := startServer(t, t.TempDir())
	admin := s.adminToken()
	_, viewer := s.userWithRoleTenant(admin, "viewer1", "viewer", "ml") // alerts are seen within one's tenants

	msg := s.fails(http.StatusBadRequest, "alert_rule_invalid_promql", http.MethodPost, "/api/v1/alert-rules", admin,
		map[string]any{"name": "Broken", "expr": "sum(hw_gpu_utilization_ratio", "level": "WARN"})
	require.Contains(t, msg, "unclosed left parenthesis")
	s.fails(http.StatusBadRequest, "alert_bad_duration", http.MethodPost, "/api/v1/alert-rules", admin,
		map[string]any{"name": "BadFor", "expr": "up", "level": "WARN", "for": "soon"})
	s.fails(http.StatusForbidden, "forbidden", http.MethodPost, "/api/v1/alert-rules", viewer,
		map[string]any{"name": "X", "expr": "up", "level": "WARN"})

	now := time.Now()
	for i := 10; i >= 0; i-- {
		s.push("gpu-7", 0.97, now.Add(-time.Duration(i)*15*time.Second))
	}
	var tested struct {
		Alerts []struct {
			Labels map[string]string `json:"labels"`
			State  string            `json:"state"`
		} `json:"alerts"`
	}
	s.ok(http.StatusOK, http.MethodPost, "/api/v1/alert-rules/test", admin,
		map[string]any{"name": "Hot", "expr": "hw_gpu_utilization_ratio > 0.9", "level": "ERROR", "for": "1m"}, &tested)
	require.Len(t, tested.Alerts, 1)
	require.Equal(t, "gpu-7", tested.Alerts[0].Labels["host_name"])
	require.Equal(t, "firing", tested.Alerts[0].State)

	var rule ruleOut
	s.ok(http.StatusCreated, http.MethodPost, "/api/v1/alert-rules", admin,
		map[string]any{"name": "Hot", "expr": "hw_gpu_utilization_ratio > 0.9", "level": "ERROR", "tenant": "ml",
			"annotations": map[string]string{"summary": "{{ $labels.host_name }} hot"}}, &rule)
	require.Equal(t, "ml", rule.Tenant)
	s.fails(http.StatusConflict, "alert_rule_exists", http.MethodPost, "/api/v1/alert-rules", admin,
		map[string]any{"name": "Hot", "expr": "up", "level": "WARN", "tenant": "ml"})
	var rules struct{ Items []ruleOut }
	s.ok(http.StatusOK, http.MethodGet, "/api/v1/alert-rules", viewer, nil, &rules)
	origins := map[string]int{}
	for _, r := range rules.Items {
		origins[r.Origin]++
	}
	require.Equal(t, 1, origins["custom"])
	require.Equal(t, shippedRules(t), origins["shipped"], "every rule of every shipped file")

	var params struct {
		Items []struct{ Key, Default, Value string }
	}
	s.fails(http.StatusBadRequest, "alert_param_invalid", http.MethodPut, "/api/v1/alert-params", admin,
		map[string]any{"values": map[string]string{"gpu_load_warn": "2"}})
	s.ok(http.StatusOK, http.MethodPut, "/api/v1/alert-params", admin, map[string]any{"values": map[string]string{"gpu_load_warn": "0.8"}}, &params)
	for _, p := range params.Items {
		if p.Key == "gpu_load_warn" {
			require.Equal(t, "0.8", p.Value)
			require.Equal(t, "0.85", p.Default)
		}
	}

	var ch struct {
		ID     int64             `json:"id"`
		Config map[string]string `json:"config"`
	}
	s.fails(http.StatusBadRequest, "channel_unknown_type", http.MethodPost, "/api/v1/alert-channels", admin,
		map[string]any{"name": "x", "type": "pager", "config": map[string]string{}})
	s.ok(http.StatusCreated, http.MethodPost, "/api/v1/alert-channels", admin,
		map[string]any{"name": "ops", "type": "dingtalk", "config": map[string]string{"url": "http://127.0.0.1:1/robot", "secret": "SEC"}}, &ch)
	require.Equal(t, "******", ch.Config["secret"])
	s.fails(http.StatusBadRequest, "channel_test_failed", http.MethodPost, "/api/v1/alert-channels/"+strconv.FormatInt(ch.ID, 10)+"/test", admin, nil)

	// The leader evaluates every 15s: wait for the custom rule to fire.
	var list struct {
		Items []struct {
			ID    int64  `json:"id"`
			Rule  string `json:"rule"`
			State string `json:"state"`
			Level string `json:"level"`
		}
		Total int
	}
	require.Eventually(t, func() bool {
		for i := 0; i < 2; i++ {
			s.push("gpu-7", 0.97, time.Now())
		}
		s.ok(http.StatusOK, http.MethodGet, "/api/v1/alerts?rule=Hot&state=ACTIVE", viewer, nil, &list)
		return list.Total == 1
	}, 40*time.Second, 500*time.Millisecond)
	id := strconv.FormatInt(list.Items[0].ID, 10)
	require.Equal(t, "ERROR", list.Items[0].Level)
	s.fails(http.StatusForbidden, "forbidden", http.MethodPost, "/api/v1/alerts/"+id+"/ack", viewer, map[string]string{"comment": "x"})
	s.ok(http.StatusOK, http.MethodPost, "/api/v1/alerts/"+id+"/ack", admin, map[string]string{"comment": "on it"}, nil)
	s.fails(http.StatusConflict, "alert_not_active", http.MethodPost, "/api/v1/alerts/"+id+"/ack", admin, nil)
	s.fails(http.StatusBadRequest, "invalid_argument", http.MethodPost, "/api/v1/alerts/"+id+"/resolve", admin, map[string]string{"reason": ""})
	var detail struct {
		State         string
		Events        []struct{ State, Actor, Comment string }
		Notifications []struct{ Kind, Status string }
	}
	s.ok(http.StatusOK, http.MethodPost, "/api/v1/alerts/"+id+"/resolve", admin, map[string]string{"reason": "fan replaced"}, nil)
	s.ok(http.StatusOK, http.MethodGet, "/api/v1/alerts/"+id, viewer, nil, &detail)
	require.Equal(t, "RESOLVED", detail.State)
	require.Len(t, detail.Events, 3)
	require.Equal(t, "on it", detail.Events[1].Comment)
	require.Equal(t, "fan replaced", detail.Events[2].Comment)
	require.NotEmpty(t, detail.Notifications, "routed to the DingTalk channel")

	var stats controlplane.AlertStats
	s.ok(http.StatusOK, http.MethodGet, "/api/v1/alerts/stats", viewer, nil, &stats)
	require.Equal(t, 1, stats.ByLevel["ERROR"])
	require.Equal(t, 1, stats.Acked)

	var sil struct{ ID int64 }
	s.fails(http.StatusBadRequest, "silence_matcher_regexp", http.MethodPost, "/api/v1/alert-silences", admin,
		map[string]any{"matchers": []map[string]string{{"name": "host_name", "op": "=~", "value": "("}}, "ends_at": time.Now().Add(time.Hour)})
	s.ok(http.StatusCreated, http.MethodPost, "/api/v1/alert-silences", admin,
		map[string]any{"matchers": []map[string]string{{"name": "host_name", "op": "=", "value": "gpu-7"}}, "ends_at": time.Now().Add(time.Hour)}, &sil)
	s.ok(http.StatusNoContent, http.MethodDelete, "/api/v1/alert-silences/"+strconv.FormatInt(sil.ID, 10), admin, nil, nil)

	var prom struct {
		Status string
		Data   struct {
			Groups []struct {
				Name  string
				Rules []struct{ Name, Type, State string }
			}
		}
	}
	s.ok(http.StatusOK, http.MethodGet, "/prometheus/api/v1/rules?type=alert", viewer, nil, &prom)
	require.Equal(t, "success", prom.Status)
	names := map[string]string{}
	for _, g := range prom.Data.Groups {
		for _, r := range g.Rules {
			require.Equal(t, "alerting", r.Type)
			names[r.Name] = r.State
		}
	}
	require.Contains(t, names, "GPUHighLoad")
	require.Equal(t, "firing", names["Hot"])
	var promAlerts struct {
		Data struct {
			Alerts []struct {
				Labels map[string]string
				State  string
			}
		}
	}
	s.ok(http.StatusOK, http.MethodGet, "/prometheus/api/v1/alerts", viewer, nil, &promAlerts)
	require.NotEmpty(t, promAlerts.Data.Alerts)

	s.ok(http.StatusNoContent, http.MethodDelete, "/api/v1/alert-rules/"+strconv.FormatInt(rule.ID, 10), admin, nil, nil)
	s.fails(http.StatusNotFound, "alert_rule_not_found", http.MethodGet, "/api/v1/alert-rules/"+strconv.FormatInt(rule.ID, 10), admin, nil)
}

// shippedRules counts the alerting and recording rules of the shipped files.
func shippedRules(t *testing.T) int {
	t.Helper()
	n := 0
	for _, name := range rules.Names {
		b, err := rules.Files.ReadFile(name)
		require.NoError(t, err)
		for _, line := range strings.Split(string(b), "\n") {
			l := strings.TrimSpace(line)
			if strings.HasPrefix(l, "- alert:") || strings.HasPrefix(l, "- record:") {
				n++
			}
		}
	}
	require.Positive(t, n)
	return n
}
