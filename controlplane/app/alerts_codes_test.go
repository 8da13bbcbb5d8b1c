package app

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestAlertErrorCodes: every refusal of the alert API carries a stable
// code and the values its message names (params), which the console
// turns into Chinese or English text; what was stored stays.
func TestAlertErrorCodes(t *testing.T) {
	s := startServer(t, t.TempDir())
	admin := s.adminToken()
	var rule ruleOut
	s.ok(http.StatusCreated, http.MethodPost, "/api/v1/alert-rules", admin,
		map[string]any{"name": "Kept", "expr": "up == 0", "level": "WARN"}, &rule)
	var ch struct{ ID int64 }
	s.ok(http.StatusCreated, http.MethodPost, "/api/v1/alert-channels", admin,
		map[string]any{"name": "hook", "type": "webhook", "config": map[string]string{"url": "http://127.0.0.1:1/"}}, &ch)

	long := strings.Repeat("x", 2049)
	for _, c := range []struct {
		name, method, path string
		body               any
		status             int
		code               string
		params             map[string]string // must be present (a value "" only checks the key)
	}{
		{"invalid PromQL", http.MethodPost, "/api/v1/alert-rules", map[string]any{"name": "Broken", "expr": "sum(up", "level": "WARN"},
			400, "alert_rule_invalid_promql", map[string]string{"detail": ""}},
		{"invalid PromQL, test now", http.MethodPost, "/api/v1/alert-rules/test", map[string]any{"name": "Broken", "expr": "rate(up)", "level": "WARN"},
			400, "alert_rule_invalid_promql", map[string]string{"detail": ""}},
		{"bad template", http.MethodPost, "/api/v1/alert-rules", map[string]any{"name": "Tmpl", "expr": "up", "level": "WARN",
			"annotations": map[string]string{"summary": "{{ $labels.x "}}, 400, "alert_rule_invalid", map[string]string{"detail": ""}},
		{"oversize template", http.MethodPost, "/api/v1/alert-rules", map[string]any{"name": "Big", "expr": "up", "level": "WARN",
			"annotations": map[string]string{"summary": long}}, 400, "alert_rule_template_too_long", map[string]string{"name": "summary", "max": "2048"}},
		{"bad name", http.MethodPost, "/api/v1/alert-rules", map[string]any{"name": "no spaces", "expr": "up", "level": "WARN"},
			400, "alert_rule_name", map[string]string{"pattern": ""}},
		{"bad for", http.MethodPost, "/api/v1/alert-rules", map[string]any{"name": "F", "expr": "up", "level": "WARN", "for": "soon"},
			400, "alert_bad_duration", map[string]string{"name": "for", "value": "soon"}},
		{"name taken", http.MethodPost, "/api/v1/alert-rules", map[string]any{"name": "Kept", "expr": "up", "level": "WARN"},
			409, "alert_rule_exists", map[string]string{"name": "Kept"}},
		{"unknown rule", http.MethodGet, "/api/v1/alert-rules/987654", nil, 404, "alert_rule_not_found", map[string]string{"id": "987654"}},
		{"unknown rule, delete", http.MethodDelete, "/api/v1/alert-rules/987654", nil, 404, "alert_rule_not_found", map[string]string{"id": "987654"}},
		{"unknown alert", http.MethodGet, "/api/v1/alerts/987654", nil, 404, "alert_not_found", map[string]string{"id": "987654"}},
		{"unknown alert, ack", http.MethodPost, "/api/v1/alerts/987654/ack", map[string]string{}, 404, "alert_not_found", map[string]string{"id": "987654"}},
		{"bad time", http.MethodGet, "/api/v1/alerts?since=yesterday", nil, 400, "alert_bad_time", map[string]string{"name": "since"}},
		{"bad parameter", http.MethodPut, "/api/v1/alert-params", map[string]any{"values": map[string]string{"gpu_load_warn": "2"}},
			400, "alert_param_invalid", map[string]string{"detail": ""}},
		{"unknown channel type", http.MethodPost, "/api/v1/alert-channels", map[string]any{"name": "x", "type": "pager", "config": map[string]string{}},
			400, "channel_unknown_type", map[string]string{"type": "pager", "types": ""}},
		{"channel without URL", http.MethodPost, "/api/v1/alert-channels", map[string]any{"name": "x", "type": "feishu", "config": map[string]string{}},
			400, "channel_config_missing", map[string]string{"type": "feishu", "key": "url"}},
		{"channel URL not http", http.MethodPost, "/api/v1/alert-channels", map[string]any{"name": "x", "type": "wecom", "config": map[string]string{"url": "ftp://x"}},
			400, "channel_bad_url", map[string]string{"url": "ftp://x"}},
		{"channel name taken", http.MethodPost, "/api/v1/alert-channels", map[string]any{"name": "hook", "type": "webhook", "config": map[string]string{"url": "http://127.0.0.1:1/"}},
			409, "channel_exists", nil},
		{"receiver does not answer", http.MethodPost, "/api/v1/alert-channels/" + strconv.FormatInt(ch.ID, 10) + "/test", nil,
			400, "channel_test_failed", map[string]string{"detail": ""}},
		{"unknown channel", http.MethodDelete, "/api/v1/alert-channels/987654", nil, 404, "channel_not_found", map[string]string{"id": "987654"}},
		{"bad matcher", http.MethodPost, "/api/v1/alert-silences", map[string]any{"matchers": []map[string]string{{"name": "node", "op": "=~", "value": "("}},
			"ends_at": time.Now().Add(time.Hour)}, 400, "silence_matcher_regexp", map[string]string{"name": "node", "detail": ""}},
		{"silence window", http.MethodPost, "/api/v1/alert-silences", map[string]any{"matchers": []map[string]string{{"name": "node", "op": "=", "value": "a"}},
			"starts_at": time.Now(), "ends_at": time.Now().Add(-time.Hour)}, 400, "silence_window", nil},
		{"unknown silence", http.MethodDelete, "/api/v1/alert-silences/987654", nil, 404, "silence_not_found", map[string]string{"id": "987654"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := s.do(c.method, c.path, admin, c.body)
			require.Equal(t, c.status, r.Status, string(r.Body))
			var e struct {
				Error struct {
					Code    string            `json:"code"`
					Message string            `json:"message"`
					Params  map[string]string `json:"params"`
				} `json:"error"`
			}
			require.NoError(t, json.Unmarshal(r.Body, &e), string(r.Body))
			require.Equal(t, c.code, e.Error.Code, string(r.Body))
			require.NotEmpty(t, e.Error.Message)
			for k, v := range c.params {
				require.Contains(t, e.Error.Params, k, string(r.Body))
				if v != "" {
					require.Equal(t, v, e.Error.Params[k], string(r.Body))
				} else {
					require.NotEmpty(t, e.Error.Params[k], string(r.Body))
				}
			}
		})
	}
	// Nothing stored was lost.
	var got ruleOut
	s.ok(http.StatusOK, http.MethodGet, "/api/v1/alert-rules/"+strconv.FormatInt(rule.ID, 10), admin, nil, &got)
	require.Equal(t, "up == 0", got.Expr)
}
