package app

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/stretchr/testify/require"
)

// TestPromQLScopeAttacks: a tenant member tries to reach another tenant's
// or an unowned node's series through PromQL constructs that change time
// (@, offset, subqueries), answer numbers rather than series (count,
// scalar, absent), join on nothing (vector(1) and on()), forge the tenant
// label, and through POST bodies, repeated parameters and the label APIs.
// Every answer is checked by its numbers as well as its labels: a count
// leaks without naming a tenant.
func TestPromQLScopeAttacks(t *testing.T) {
	s := startServer(t, t.TempDir())
	admin := s.adminToken()
	_, ann := s.userWithRoleTenant(admin, "ann", "user", "acme")

	now := time.Now()
	s.appendEvery15s(t, now, 9, 7,
		labels.FromStrings("__name__", "heteroflow_attack_probe", "tenant", "acme"),
		labels.FromStrings("__name__", "heteroflow_attack_probe", "tenant", "globex", "secret", "g1"),
		labels.FromStrings("__name__", "heteroflow_attack_probe", "tenant", "globex", "secret", "g2"),
		labels.FromStrings("__name__", "heteroflow_attack_unowned", "host_name", "shared-9"),
	)

	type series struct {
		Metric map[string]string `json:"metric"`
		Value  []any             `json:"value"`
		Values [][]any           `json:"values"`
	}
	type queryData struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	}
	type answer struct {
		Status string          `json:"status"`
		Data   json.RawMessage `json:"data"`
	}
	send := func(method, path string, form url.Values) answer {
		t.Helper()
		var body io.Reader
		if method == http.MethodPost {
			body = strings.NewReader(form.Encode())
		} else if form != nil {
			path += "?" + form.Encode()
		}
		req, err := http.NewRequestWithContext(t.Context(), method, s.base+path, body)
		require.NoError(t, err)
		if method == http.MethodPost {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		req.Header.Set("Authorization", "Bearer "+ann)
		res, err := s.http.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, res.StatusCode, "%s %s %v: %s", method, path, form, b)
		require.NotContains(t, string(b), "globex", "%s %v", path, form)
		require.NotContains(t, string(b), "shared-9", "%s %v", path, form)
		require.NotContains(t, string(b), "heteroflow_attack_unowned", "%s %v", path, form)
		var a answer
		require.NoError(t, json.Unmarshal(b, &a), string(b))
		return a
	}
	// number answers the one number an instant query returns ("" for none).
	query := func(method, path string, form url.Values) queryData {
		t.Helper()
		var d queryData
		require.NoError(t, json.Unmarshal(send(method, path, form).Data, &d))
		return d
	}
	number := func(q string) string {
		t.Helper()
		a := query(http.MethodGet, "/prometheus/api/v1/query", url.Values{"query": {q}, "time": {fmt.Sprint(now.Unix())}})
		switch a.ResultType {
		case "scalar":
			var v []any
			require.NoError(t, json.Unmarshal(a.Result, &v))
			return v[1].(string)
		case "vector":
			var v []series
			require.NoError(t, json.Unmarshal(a.Result, &v))
			require.LessOrEqual(t, len(v), 1, "%s: %s", q, a.Result)
			if len(v) == 0 {
				return ""
			}
			return v[0].Value[1].(string)
		}
		t.Fatalf("%s: result type %s", q, a.ResultType)
		return ""
	}
	for q, want := range map[string]string{
		`count(heteroflow_attack_probe)`:                                                     "1",
		`count({__name__=~"heteroflow_attack_.+"})`:                                          "1",
		`count(heteroflow_attack_probe{tenant="globex"})`:                                    "",
		`scalar(count(heteroflow_attack_probe{tenant!="acme"}))`:                             "NaN",
		`absent(heteroflow_attack_probe{tenant="globex"})`:                                   "1",
		`absent(heteroflow_attack_unowned)`:                                                  "1",
		`count(count by (tenant, secret) ({__name__=~"heteroflow_attack_.+"}))`:              "1",
		`count(timestamp({__name__=~"heteroflow_attack_.+"}))`:                               "1",
		`count(last_over_time({__name__=~"heteroflow_attack_.+"}[5m]))`:                      "1",
		`count(count_over_time({__name__=~"heteroflow_attack_.+"}[2m:15s]))`:                 "1",
		`count({__name__=~"heteroflow_attack_.+"} @ end())`:                                  "1",
		`count({__name__=~"heteroflow_attack_.+"} offset 30s)`:                               "1",
		`count(max_over_time({__name__=~"heteroflow_attack_.+"}[5m] @ start() offset -30s))`: "1",
		`vector(1) and on() count(heteroflow_attack_probe{tenant="globex"})`:                 "",
		`count(label_replace({__name__=~"heteroflow_attack_.+"}, "tenant", "acme", "", ""))`: "1",
		`count(label_join({__name__=~"heteroflow_attack_.+"}, "tenant", "", "secret"))`:      "1",
		`sum(sort_desc({__name__=~"heteroflow_attack_.+"}))`:                                 "7",
		`count(heteroflow_attack_probe or on() vector(0))`:                                   "1",
		`count(-(heteroflow_attack_probe))`:                                                  "1",
	} {
		require.Equal(t, want, number(q), q)
	}

	// The bare range selector of an instant query, a range query, a POST
	// body, and a query given twice (the first copy is the one narrowed).
	var m []series
	a := query(http.MethodGet, "/prometheus/api/v1/query", url.Values{"query": {`{__name__=~"heteroflow_attack_.+"}[2m]`}})
	require.NoError(t, json.Unmarshal(a.Result, &m))
	require.Len(t, m, 1)
	rng := url.Values{"query": {`{__name__=~"heteroflow_attack_.+"}`}, "start": {fmt.Sprint(now.Add(-2 * time.Minute).Unix())},
		"end": {fmt.Sprint(now.Unix())}, "step": {"15"}}
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		a = query(method, "/prometheus/api/v1/query_range", rng)
		require.NoError(t, json.Unmarshal(a.Result, &m))
		require.Len(t, m, 1, method)
	}
	a = query(http.MethodGet, "/prometheus/api/v1/query", url.Values{"query": {`heteroflow_attack_probe{tenant="acme"}`, `{__name__=~".+"}`}})
	require.NoError(t, json.Unmarshal(a.Result, &m))
	require.Len(t, m, 1)

	// The label APIs, GET and POST.
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		send(method, "/prometheus/api/v1/series", url.Values{"match[]": {`{__name__=~".+"}`, `{tenant="globex"}`, `{host_name=~".+"}`}})
		send(method, "/prometheus/api/v1/labels", url.Values{"match[]": {`{tenant="globex"}`}})
		send(method, "/prometheus/api/v1/labels", nil)
	}
	for _, name := range []string{"__name__", "tenant", "secret", "host_name"} {
		values := send(http.MethodGet, "/prometheus/api/v1/label/"+name+"/values", url.Values{"match[]": {`{tenant=~".+"}`}})
		if name == "secret" {
			require.JSONEq(t, `[]`, string(values.Data), "another tenant's label value")
		}
	}
}

// TestPromQLScopeAttacksDedicatedPool: with a dedicated pool the scope is
// a union of two selections (the tenant's series, and the untenanted
// series of its pool's nodes); the same attacks reach neither another
// tenant's series on the pool's node nor a shared node's.
func TestPromQLScopeAttacksDedicatedPool(t *testing.T) {
	s := startServer(t, t.TempDir())
	admin := s.adminToken()
	_, ann := s.userWithRoleTenant(admin, "ann", "user", "acme")
	_, tok := s.bootstrapToken(admin)
	enroll := enrollBody(tok, "ded", "nvidia", 1)
	enroll.Labels = map[string]string{"pool": "acme"}
	var node struct {
		NodeID string `json:"node_id"`
	}
	s.ok(http.StatusCreated, http.MethodPost, "/api/v1/agents/enroll", "", enroll, &node)
	require.NotEmpty(t, node.NodeID)
	s.ok(http.StatusOK, http.MethodPatch, "/api/v1/tenants/acme", admin, map[string]any{"node_selector": map[string]string{"pool": "acme"}}, nil)

	now := time.Now()
	s.appendEvery15s(t, now, 9, 3,
		labels.FromStrings("__name__", "heteroflow_pool_probe", "tenant", "acme"),
		labels.FromStrings("__name__", "heteroflow_pool_probe", "host_name", node.NodeID),
		labels.FromStrings("__name__", "heteroflow_pool_probe", "host_name", node.NodeID, "tenant", "globex"),
		labels.FromStrings("__name__", "heteroflow_pool_probe", "host_name", "shared-2"),
	)

	get := func(path string, form url.Values) string {
		t.Helper()
		r := s.do(http.MethodGet, path+"?"+form.Encode(), ann, nil)
		require.Equal(t, http.StatusOK, r.Status, "%s %v: %s", path, form, r.Body)
		require.NotContains(t, string(r.Body), "globex", "%v", form)
		require.NotContains(t, string(r.Body), "shared-2", "%v", form)
		return string(r.Body)
	}
	count := func(q string) string {
		t.Helper()
		var out struct {
			Data struct {
				Result []struct {
					Value []any `json:"value"`
				} `json:"result"`
			} `json:"data"`
		}
		require.NoError(t, json.Unmarshal([]byte(get("/prometheus/api/v1/query", url.Values{"query": {q}, "time": {fmt.Sprint(now.Unix())}})), &out))
		if len(out.Data.Result) == 0 {
			return ""
		}
		require.Len(t, out.Data.Result, 1, q)
		return out.Data.Result[0].Value[1].(string)
	}
	for q, want := range map[string]string{
		`count(heteroflow_pool_probe)`:                                      "2",
		`count({__name__=~"heteroflow_pool_.+", host_name!=""})`:            "1",
		`count({tenant="globex"})`:                                          "",
		`count({host_name="shared-2"})`:                                     "",
		`count(rate(heteroflow_pool_probe[1m]))`:                            "2",
		`count(timestamp(heteroflow_pool_probe))`:                           "2",
		`count(max_over_time(heteroflow_pool_probe[2m:15s] offset 15s))`:    "2",
		`count(heteroflow_pool_probe @ end())`:                              "2",
		`count(label_replace(heteroflow_pool_probe, "tenant", "", "", ""))`: "2",
		`count(count by (host_name, tenant) ({__name__=~".+"}))`:            "2",
		`vector(1) and on() count({host_name="shared-2"})`:                  "",
		`absent_over_time({tenant="globex"}[5m])`:                           "1",
	} {
		require.Equal(t, want, count(q), q)
	}
	body := get("/prometheus/api/v1/label/host_name/values", nil)
	require.Contains(t, body, node.NodeID)
	get("/prometheus/api/v1/series", url.Values{"match[]": {`{host_name=~".+"}`, `{tenant=~".+"}`}})
	get("/prometheus/api/v1/query", url.Values{"query": {`heteroflow_pool_probe[2m]`}})
}
