package app

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// otlpGauge is an OTLP/JSON push of one gauge sample on host.
func otlpGauge(name, host string, v float64) map[string]any {
	attr := func(k, v string) map[string]any {
		return map[string]any{"key": k, "value": map[string]any{"stringValue": v}}
	}
	return map[string]any{"resourceMetrics": []any{map[string]any{
		"resource": map[string]any{"attributes": []any{attr("host.name", host)}},
		"scopeMetrics": []any{map[string]any{"metrics": []any{map[string]any{
			"name": name,
			"gauge": map[string]any{"dataPoints": []any{map[string]any{
				"asDouble": v, "timeUnixNano": fmt.Sprint(time.Now().UnixNano()),
				"attributes": []any{attr("hw_index", "0")},
			}}},
		}}}},
	}}}
}

// TestAgentPushesOnlyItsOwnHost: the scheduler's LoadAware reads live
// utilisation by host_name (the node id the agent's collector stamps),
// and alerts name their node by it. One node's agent key must not write
// series for another node (saturate it in the scheduler's eyes, raise or
// hide its alerts): such a push is refused whole, 400. Its own node's
// series, and an admin's push for any host, are stored.
func TestAgentPushesOnlyItsOwnHost(t *testing.T) {
	s := startServer(t, t.TempDir())
	admin := s.adminToken()
	victim, _ := s.enrollNode(admin, "victim", "nvidia", 1)
	mallory, malloryKey := s.enrollNode(admin, "mallory", "nvidia", 1)

	const metric = "hw_gpu_utilization_ratio"
	msg := s.fails(http.StatusBadRequest, "invalid_argument", http.MethodPost, "/api/v1/otlp/v1/metrics", malloryKey,
		otlpGauge(metric, victim, 1))
	require.Contains(t, msg, victim)
	s.ok(http.StatusOK, http.MethodPost, "/api/v1/otlp/v1/metrics", malloryKey, otlpGauge(metric, mallory, 0.5), nil)
	s.ok(http.StatusOK, http.MethodPost, "/api/v1/otlp/v1/metrics", admin, otlpGauge("heteroflow_probe_admin", victim, 1), nil)

	r := s.do(http.MethodGet, "/prometheus/api/v1/query?"+url.Values{"query": {metric}}.Encode(), admin, nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	require.Contains(t, string(r.Body), mallory)
	require.False(t, strings.Contains(string(r.Body), victim), "nothing was stored for the victim: %s", r.Body)
}
