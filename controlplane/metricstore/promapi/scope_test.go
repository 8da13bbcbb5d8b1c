package promapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb"
	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane/metricstore/promapi"
)

// scopedAPI serves a TSDB holding tenant A's and tenant B's series: a task
// series of each tenant, a device series of A's dedicated node nA and of
// B's node nB. B's values are 1000 and above, A's below, so a leak shows
// as a label or as a value.
func scopedAPI(t *testing.T, scope *promapi.Scope) (http.Handler, time.Time) {
	t.Helper()
	db, err := tsdb.Open(t.TempDir(), nil, nil, tsdb.DefaultOptions(), nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	now := time.Now().Truncate(time.Second)
	app := db.AppenderV2(context.Background())
	series := []struct {
		ls labels.Labels
		v  float64
	}{
		{labels.FromStrings("__name__", "task_x", "tenant", "A", "task_id", "1"), 1},
		{labels.FromStrings("__name__", "task_x", "tenant", "B", "task_id", "2"), 1000},
		{labels.FromStrings("__name__", "gpu_util", "host_name", "nA"), 10},
		{labels.FromStrings("__name__", "gpu_util", "host_name", "nB"), 100000},
		{labels.FromStrings("__name__", "alloc", "tenant", "B", "host_name", "nA"), 5000},
	}
	for i := 10; i >= 0; i-- {
		at := now.Add(-time.Duration(i) * time.Minute).UnixMilli()
		for _, s := range series {
			_, err := app.Append(0, s.ls, 0, at, s.v+float64(10-i)/100, nil, nil, storage.AOptions{})
			require.NoError(t, err)
		}
	}
	require.NoError(t, app.Commit())
	engine := promql.NewEngine(promql.EngineOpts{MaxSamples: 100000, Timeout: time.Minute, LookbackDelta: 5 * time.Minute})
	api, err := promapi.New(promapi.Options{Engine: engine, Queryable: db})
	require.NoError(t, err)
	return promapi.Scoped(func(*http.Request) (*promapi.Scope, error) { return scope, nil }, api.Handler()), now
}

// leaks reports B's labels or values anywhere in a response's data.
func leaks(t *testing.T, data json.RawMessage) string {
	t.Helper()
	var walk func(v any) string
	walk = func(v any) string {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if (k == "tenant" && e == "B") || e == "nB" {
					return k + "=" + e.(string)
				}
				if r := walk(e); r != "" {
					return r
				}
			}
		case []any:
			for _, e := range x {
				if r := walk(e); r != "" {
					return r
				}
			}
		case string:
			if x == "B" || x == "nB" {
				return x
			}
			var f float64
			if err := json.Unmarshal([]byte(x), &f); err == nil && f >= 1000 && f < 1e9 {
				return "value " + x
			}
		}
		return ""
	}
	var v any
	require.NoError(t, json.Unmarshal(data, &v))
	return walk(v)
}

// Queries written to escape a tenant's scope: regex and empty matchers on
// the tenant label, set operators, label rewriting, subqueries, range
// functions and aggregations over every series.
var escapes = []string{
	`task_x`,
	`task_x{tenant="B"}`,
	`task_x{tenant=~".+"}`,
	`task_x{tenant!="A"}`,
	`{__name__=~".+"}`,
	`{tenant=~".*", __name__=~".+"}`,
	`{tenant=~".+"}`,
	`{__name__=~"task_x|gpu_util|alloc"} or {tenant="B"}`,
	`vector(1) and on() task_x{tenant="B"}`,
	`sum(task_x) unless on() task_x{tenant="A"}`,
	`label_replace({__name__=~".+"}, "tenant", "A", "tenant", ".*")`,
	`label_replace(gpu_util, "host_name", "nA", "host_name", "nB")`,
	`max_over_time({__name__=~"task_x|gpu_util|alloc"}[10m])`,
	`max_over_time(sum({__name__=~".+"})[10m:1m])`,
	`sum_over_time((task_x or gpu_util)[10m:1m])`,
	`rate({__name__=~"gpu_util|task_x|alloc"}[5m]) * 0 + on() group_left() vector(1)`,
	`timestamp(gpu_util{host_name="nB"})`,
	`count_values("v", {__name__=~".+"})`,
	`topk(10, {__name__=~".+"})`,
	`sum by (tenant, host_name) ({__name__=~".+"})`,
	`quantile_over_time(0.5, alloc[10m])`,
	`max(gpu_util) > 0`,
	`{__name__="gpu_util", host_name="nB"}[5m]`,
}

func TestScopedQueriesNeverLeakAnotherTenant(t *testing.T) {
	t.Parallel()
	for _, sc := range []struct {
		name  string
		scope promapi.Scope
	}{
		{"tenant and its node", promapi.Scope{Tenants: []string{"A"}, Nodes: []string{"nA"}}},
		{"tenant only", promapi.Scope{Tenants: []string{"A"}}},
		{"node only", promapi.Scope{Nodes: []string{"nA"}}},
		{"nothing", promapi.Scope{}},
	} {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			scope := sc.scope
			h, now := scopedAPI(t, &scope)
			for _, q := range escapes {
				for _, method := range []string{http.MethodGet, http.MethodPost} {
					code, e := do(t, h, method, "/api/v1/query", url.Values{"query": {q}, "time": {unix(now)}})
					require.Equal(t, 200, code, "%s: %s", q, e.Error)
					require.Empty(t, leaks(t, e.Data), "%s %s leaked: %s", method, q, e.Data)
				}
				if strings.HasSuffix(q, "[5m]") {
					continue // a range selector is no range query
				}
				code, e := do(t, h, http.MethodGet, "/api/v1/query_range", url.Values{"query": {q},
					"start": {unix(now.Add(-10 * time.Minute))}, "end": {unix(now)}, "step": {"60"}})
				require.Equal(t, 200, code, "%s: %s", q, e.Error)
				require.Empty(t, leaks(t, e.Data), "range %s leaked: %s", q, e.Data)
			}
			for _, m := range []string{`{__name__=~".+"}`, `{tenant="B"}`, `gpu_util`, `{host_name=~"n.*"}`} {
				code, e := do(t, h, http.MethodGet, "/api/v1/series", url.Values{"match[]": {m}})
				require.Equal(t, 200, code, e.Error)
				require.Empty(t, leaks(t, e.Data), "series %s leaked: %s", m, e.Data)
			}
			for _, path := range []string{"/api/v1/labels", "/api/v1/label/tenant/values", "/api/v1/label/host_name/values", "/api/v1/label/__name__/values"} {
				for _, form := range []url.Values{{}, {"match[]": {`{tenant="B"}`}}, {"match[]": {`{__name__=~".+"}`}}} {
					code, e := do(t, h, http.MethodGet, path, form)
					require.Equal(t, 200, code, e.Error)
					require.Empty(t, leaks(t, e.Data), "%s %v leaked: %s", path, form, e.Data)
				}
			}
			code, e := do(t, h, http.MethodGet, "/api/v1/status/tsdb", nil)
			require.Equal(t, 404, code, "an endpoint outside the list is refused to scoped callers")
			require.Equal(t, "not_found", e.ErrorType)
		})
	}
}

// TestScopedQueriesSeeTheirOwn checks the scope is no blanket refusal: a
// tenant's caller reads its task series and its dedicated node's devices,
// whole, through a union that keeps each series once.
func TestScopedQueriesSeeTheirOwn(t *testing.T) {
	t.Parallel()
	h, now := scopedAPI(t, &promapi.Scope{Tenants: []string{"A"}, Nodes: []string{"nA"}})
	for q, want := range map[string]string{
		`sum(task_x)`:                  `1.1`,
		`sum(gpu_util)`:                `10.1`,
		`count({__name__=~".+"})`:      `2`,
		`max_over_time(gpu_util[10m])`: `10.1`,
		`max_over_time(sum({__name__=~".+"})[10m:1m]) > 11`: `11.2`,
		`count(timestamp({__name__=~".+"}))`:                `2`,
	} {
		code, e := do(t, h, http.MethodGet, "/api/v1/query", url.Values{"query": {q}, "time": {unix(now)}})
		require.Equal(t, 200, code, e.Error)
		var d struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		}
		require.NoError(t, json.Unmarshal(e.Data, &d))
		require.Len(t, d.Result, 1, "%s: %s", q, e.Data)
		if strings.HasSuffix(q, "> 11") {
			continue // the subquery's steps are aligned to the minute: 11.1x, the sum of A's two series
		}
		require.Equal(t, want, d.Result[0].Value[1], q)
	}
	code, e := do(t, h, http.MethodGet, "/api/v1/label/tenant/values", nil)
	require.Equal(t, 200, code)
	require.JSONEq(t, `["A"]`, string(e.Data))
	code, e = do(t, h, http.MethodGet, "/api/v1/label/host_name/values", nil)
	require.Equal(t, 200, code)
	require.JSONEq(t, `["nA"]`, string(e.Data))
	code, e = do(t, h, http.MethodGet, "/api/v1/query", url.Values{"query": {`sum(`}})
	require.Equal(t, 400, code, "a parse error stays the client's error")
	require.Equal(t, "bad_data", e.ErrorType)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/api/v1/status/buildinfo", nil))
	require.Equal(t, 200, w.Code)
}
