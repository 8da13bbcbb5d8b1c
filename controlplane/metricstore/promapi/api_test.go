package promapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
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

type envelope struct {
	Status    string          `json:"status"`
	Data      json.RawMessage `json:"data"`
	ErrorType string          `json:"errorType"`
	Error     string          `json:"error"`
}

func newAPI(t *testing.T, maxSamples int) (http.Handler, time.Time) {
	t.Helper()
	db, err := tsdb.Open(t.TempDir(), nil, nil, tsdb.DefaultOptions(), nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	now := time.Now().Truncate(time.Second)
	app := db.AppenderV2(context.Background())
	for i, node := range []string{"a", "b"} {
		_, err := app.Append(0, labels.FromStrings("__name__", "up", "node", node), 0, now.UnixMilli(), float64(i), nil, nil, storage.AOptions{})
		require.NoError(t, err)
	}
	require.NoError(t, app.Commit())
	engine := promql.NewEngine(promql.EngineOpts{MaxSamples: maxSamples, Timeout: time.Minute, LookbackDelta: 5 * time.Minute})
	api, err := promapi.New(promapi.Options{Engine: engine, Queryable: db, Version: "9.9.9"})
	require.NoError(t, err)
	return api.Handler(), now
}

func do(t *testing.T, h http.Handler, method, path string, form url.Values) (int, envelope) {
	t.Helper()
	var r *http.Request
	if method == http.MethodPost {
		r = httptest.NewRequest(method, path, strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		r = httptest.NewRequest(method, path+"?"+form.Encode(), nil)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	require.Equal(t, "application/json", w.Header().Get("Content-Type"))
	var e envelope
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &e), w.Body.String())
	return w.Code, e
}

func TestEndpoints(t *testing.T) {
	t.Parallel()
	h, now := newAPI(t, 1000)
	ts := now.Format(time.RFC3339)
	cases := []struct {
		name, method, path string
		form               url.Values
		status             int
		errType            string
		data               string // expected JSON of data, when set
	}{
		{"instant GET", "GET", "/api/v1/query", url.Values{"query": {`sum(up)`}, "time": {ts}}, 200, "",
			`{"resultType":"vector","result":[{"metric":{},"value":[` + unix(now) + `,"1"]}]}`},
		{"instant POST form", "POST", "/api/v1/query", url.Values{"query": {`up{node="b"}`}, "time": {unix(now)}}, 200, "",
			`{"resultType":"vector","result":[{"metric":{"__name__":"up","node":"b"},"value":[` + unix(now) + `,"1"]}]}`},
		{"scalar", "GET", "/api/v1/query", url.Values{"query": {`1+1`}, "time": {unix(now)}}, 200, "",
			`{"resultType":"scalar","result":[` + unix(now) + `,"2"]}`},
		{"range", "POST", "/api/v1/query_range", url.Values{"query": {`sum(up)`}, "start": {unix(now)}, "end": {unix(now)}, "step": {"15s"}}, 200, "",
			`{"resultType":"matrix","result":[{"metric":{},"values":[[` + unix(now) + `,"1"]]}]}`},
		{"range aggregate over nothing is [] not null", "GET", "/api/v1/query_range", url.Values{"query": {`sum(absent_metric)`}, "start": {unix(now)}, "end": {unix(now)}, "step": {"15s"}}, 200, "",
			`{"resultType":"matrix","result":[]}`},
		{"instant aggregate over nothing is [] not null", "GET", "/api/v1/query", url.Values{"query": {`sum(absent_metric)`}, "time": {unix(now)}}, 200, "",
			`{"resultType":"vector","result":[]}`},
		{"parse error", "GET", "/api/v1/query", url.Values{"query": {`sum(`}}, 400, "bad_data", ""},
		{"bad time", "GET", "/api/v1/query", url.Values{"query": {`up`}, "time": {"yesterday"}}, 400, "bad_data", ""},
		{"range missing step", "GET", "/api/v1/query_range", url.Values{"query": {`up`}, "start": {"1"}, "end": {"2"}}, 400, "bad_data", ""},
		{"range too many points", "GET", "/api/v1/query_range", url.Values{"query": {`up`}, "start": {"0"}, "end": {"100000"}, "step": {"1"}}, 400, "bad_data", ""},
		{"series", "GET", "/api/v1/series", url.Values{"match[]": {`up{node="a"}`}}, 200, "", `[{"__name__":"up","node":"a"}]`},
		{"series needs match", "GET", "/api/v1/series", nil, 400, "bad_data", ""},
		{"labels", "GET", "/api/v1/labels", nil, 200, "", `["__name__","node"]`},
		{"label values", "GET", "/api/v1/label/node/values", url.Values{"match[]": {`up`}}, 200, "", `["a","b"]`},
		{"label values limit", "GET", "/api/v1/label/node/values", url.Values{"limit": {"1"}}, 200, "", `["a"]`},
		{"metadata empty", "GET", "/api/v1/metadata", nil, 200, "", `{}`},
		{"buildinfo", "GET", "/api/v1/status/buildinfo", nil, 200, "", ""},
		{"unknown endpoint", "GET", "/api/v1/rules", nil, 404, "not_found", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, e := do(t, h, tc.method, tc.path, tc.form)
			require.Equal(t, tc.status, code, e.Error)
			if tc.errType != "" {
				require.Equal(t, "error", e.Status)
				require.Equal(t, tc.errType, e.ErrorType)
				require.NotEmpty(t, e.Error)
				return
			}
			require.Equal(t, "success", e.Status)
			if tc.data != "" {
				require.JSONEq(t, tc.data, string(e.Data))
			}
		})
	}
}

// unix renders whole seconds the way Prometheus' JSON does (no fraction).
func unix(t time.Time) string { return strconv.FormatInt(t.Unix(), 10) }

func TestTooManySamplesIsExecutionError(t *testing.T) {
	t.Parallel()
	h, now := newAPI(t, 1) // the fixture has two series
	code, e := do(t, h, http.MethodGet, "/api/v1/query", url.Values{"query": {`up`}, "time": {unix(now)}})
	require.Equal(t, http.StatusUnprocessableEntity, code)
	require.Equal(t, "execution", e.ErrorType)
	require.Contains(t, e.Error, "too many samples")
}

// TestParseErrorMessage: a query that does not parse is answered with
// Prometheus' own wording, so clients and the parity corpus see the same
// error text.
func TestParseErrorMessage(t *testing.T) {
	t.Parallel()
	h, _ := newAPI(t, 1000)
	for _, path := range []string{"/api/v1/query", "/api/v1/query_range"} {
		code, e := do(t, h, http.MethodGet, path, url.Values{"query": {`sum(`}, "start": {"1"}, "end": {"2"}, "step": {"1"}})
		require.Equal(t, http.StatusBadRequest, code)
		require.Equal(t, "bad_data", e.ErrorType)
		require.True(t, strings.HasPrefix(e.Error, `invalid parameter "query": 1:5: parse error:`), e.Error)
	}
}

// TestNumbersAsPrometheusWritesThem: sample values use exponent notation
// below 1e-6 and from 1e21 on, as Prometheus' HTTP API writes them.
func TestNumbersAsPrometheusWritesThem(t *testing.T) {
	t.Parallel()
	h, now := newAPI(t, 1000)
	for q, want := range map[string]string{`vector(1e300)`: `"1e+300"`, `vector(1e-7)`: `"1e-07"`, `vector(123.25)`: `"123.25"`, `vector(-Inf)`: `"-Inf"`} {
		code, e := do(t, h, http.MethodGet, "/api/v1/query", url.Values{"query": {q}, "time": {unix(now)}})
		require.Equal(t, http.StatusOK, code)
		require.JSONEq(t, `{"resultType":"vector","result":[{"metric":{},"value":[`+unix(now)+`,`+want+`]}]}`, string(e.Data), q)
		code, e = do(t, h, http.MethodGet, "/api/v1/query_range", url.Values{"query": {q}, "start": {unix(now)}, "end": {unix(now)}, "step": {"1"}})
		require.Equal(t, http.StatusOK, code)
		require.JSONEq(t, `{"resultType":"matrix","result":[{"metric":{},"values":[[`+unix(now)+`,`+want+`]]}]}`, string(e.Data), q)
	}
}
