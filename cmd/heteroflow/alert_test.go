package main

import (
	"encoding/json"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane/server"
)

// startAlertApp is startApp with the alert engine evaluating every second.
func startAlertApp(t *testing.T) string {
	t.Helper()
	return startAppWith(t, func(c *server.Config) { c.Alerts.EvaluationInterval = server.Duration(time.Second) }).base
}

// TestAlertCLI drives `heteroflow alert` as a user would against a real
// server: a custom rule is tested, created and fires; the alert is listed,
// shown, acknowledged and resolved by hand; statistics, rules, silences
// and rule deletion; and every bad input exits 1 naming the reason.
func TestAlertCLI(t *testing.T) {
	base := startAlertApp(t)
	r := cli(t, nil, adminPassword+"\n", "login", "--server", base, "--username", "admin", "--password-stdin")
	require.Equal(t, 0, r.code, r.stderr)

	// Invalid PromQL is refused on save and on test, naming the parse error.
	for _, sub := range []string{"rule-create", "rule-test"} {
		r = cli(t, nil, "", "alert", sub, "--name", "Broken", "--expr", "sum(rate(x[5m])")
		require.Equal(t, 1, r.code, sub)
		require.Contains(t, r.stderr, "parse error", sub)
		require.Contains(t, r.stderr, "unclosed left parenthesis", sub)
	}
	r = cli(t, nil, "", "alert", "rule-create", "--name", "bad name!", "--expr", "up")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "name must match")
	r = cli(t, nil, "", "alert", "rule-create", "--expr", "up")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, `"name" not set`)
	r = cli(t, nil, "", "alert", "rules")
	require.Equal(t, 0, r.code, r.stderr)
	require.NotContains(t, r.stdout, "Broken", "nothing was saved")

	// Test now: what would fire, without saving.
	r = cli(t, nil, "", "alert", "rule-test", "--name", "Probe", "--expr", `vector(2) > 1`)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "1 alert(s) now")
	r = cli(t, nil, "", "alert", "rule-test", "--name", "Probe", "--expr", `vector(0) > 1`)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "0 alert(s) now")

	r = cli(t, nil, "", "alert", "rule-create", "--name", "AlwaysOn", "--expr", `vector(1) > 0`, "--level", "error",
		"--summary", "always on", "--summary-zh", "一直触发")
	require.Equal(t, 0, r.code, r.stderr)
	m := regexp.MustCompile(`rule (\d+) AlwaysOn created`).FindStringSubmatch(r.stdout)
	require.NotNil(t, m, r.stdout)
	ruleID := m[1]
	r = cli(t, nil, "", "alert", "rule-create", "--name", "AlwaysOn", "--expr", `vector(1) > 0`)
	require.Equal(t, 1, r.code, "the name is taken")
	require.Contains(t, r.stderr, "AlwaysOn")
	r = cli(t, nil, "", "alert", "rules")
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, ruleID+`\s+custom\s+AlwaysOn\s+ERROR`, r.stdout)
	require.Regexp(t, `shipped\s+GPUHighLoad`, r.stdout)

	// The engine (every second) opens the alert.
	var list struct {
		Items []alertRow `json:"items"`
		Total int        `json:"total"`
	}
	require.Eventually(t, func() bool {
		r = cli(t, nil, "", "alert", "list", "--rule", "AlwaysOn", "--json")
		require.Equal(t, 0, r.code, r.stderr)
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &list))
		return len(list.Items) == 1
	}, 30*time.Second, 500*time.Millisecond)
	a := list.Items[0]
	require.Equal(t, "ACTIVE", a.State)
	require.Equal(t, "ERROR", a.Level)
	id := strconvI(a.ID)
	r = cli(t, nil, "", "alert", "list", "--state", "active", "--level", "error")
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, id+`\s+ERROR\s+ACTIVE\s+AlwaysOn`, r.stdout)
	require.Contains(t, r.stdout, "always on / 一直触发")
	r = cli(t, nil, "", "alert", "list", "--state", "resolved")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "(0 of 0 / 共 0)")
	r = cli(t, nil, "", "alert", "list", "--state", "bogus")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "BOGUS")

	r = cli(t, nil, "", "alert", "get", id)
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `rule / 规则\s+AlwaysOn`, r.stdout)
	require.Regexp(t, `state / 状态\s+ACTIVE`, r.stdout)
	require.Regexp(t, `tenant / 租户\s+\S`, r.stdout, "an empty field is a dash")
	require.NotRegexp(t, `(?m)^(ID|Rule|Level|State|Node|Tenant|Fired|Summary)\s`, r.stdout, "no English-only field names")

	// Acknowledge, once; resolve by hand needs a reason.
	r = cli(t, nil, "", "alert", "ack", id, "--comment", "on it")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "alert "+id+" ACKNOWLEDGED by admin")
	r = cli(t, nil, "", "alert", "ack", id)
	require.Equal(t, 1, r.code, "only an ACTIVE alert is acknowledged")
	require.Contains(t, r.stderr, "is not ACTIVE")
	r = cli(t, nil, "", "alert", "resolve", id)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "--reason is required")
	r = cli(t, nil, "", "alert", "resolve", id, "--reason", "fixed the fan")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "alert "+id+" RESOLVED by admin")
	r = cli(t, nil, "", "alert", "resolve", id, "--reason", "again")
	require.Equal(t, 1, r.code, "already resolved")
	r = cli(t, nil, "", "alert", "get", id, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var got alertRow
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
	require.Equal(t, "RESOLVED", got.State)
	require.Equal(t, "on it", got.AckComment)
	require.Equal(t, "fixed the fan", got.Resolution)
	require.GreaterOrEqual(t, len(got.Events), 3, "ACTIVE, ACKNOWLEDGED, RESOLVED")

	// Unknown and malformed ids.
	for _, sub := range []string{"get", "ack", "resolve", "rule-delete"} {
		args := []string{"alert", sub, "987654"}
		if sub == "resolve" {
			args = append(args, "--reason", "x")
		}
		r = cli(t, nil, "", args...)
		require.Equal(t, 1, r.code, sub)
		require.Contains(t, r.stderr, "not found", sub)
		r = cli(t, nil, "", "alert", sub, "abc")
		require.Equal(t, 1, r.code, sub)
		require.Contains(t, r.stderr, "positive integer", sub)
	}

	r = cli(t, nil, "", "alert", "stats")
	require.Equal(t, 0, r.code, r.stderr)
	var st struct {
		ByLevel map[string]int `json:"by_level"`
		ByRule  map[string]int `json:"by_rule"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &st), r.stdout)
	require.Equal(t, 1, st.ByLevel["ERROR"], r.stdout)
	require.Equal(t, 1, st.ByRule["AlwaysOn"], r.stdout)

	// Silences.
	r = cli(t, nil, "", "alert", "silence", "--match", "host_name=gpu-1", "--match", `alertname=~"GPU.*"`, "--for", "1h", "--comment", "maintenance")
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `silence \d+ until`, r.stdout)
	r = cli(t, nil, "", "alert", "silence", "--match", "host_name")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "must be label=value")
	r = cli(t, nil, "", "alert", "silence")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "at least one --match")
	r = cli(t, nil, "", "alert", "silence", "--match", "host_name=gpu-1", "--for", "-1h")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "--for must be a positive duration")
	r = cli(t, nil, "", "alert", "silence", "--match", "node=~(", "--for", "1h")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "matcher node")

	// Delete the rule: once.
	r = cli(t, nil, "", "alert", "rule-delete", ruleID)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "rule "+ruleID+" deleted")
	r = cli(t, nil, "", "alert", "rule-delete", ruleID)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "not found")
	r = cli(t, nil, "", "alert", "rules")
	require.Equal(t, 0, r.code, r.stderr)
	require.NotContains(t, r.stdout, "AlwaysOn")
}
