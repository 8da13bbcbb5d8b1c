package promapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb"
	"github.com/prometheus/prometheus/util/annotations"
	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane/metricstore/promapi"
)

// concurrencyFixture is a TSDB with gauges, counters and classic histogram
// buckets over half an hour, served through the API on a real HTTP server
// (so encoding runs in the server's goroutines, as in production).
func concurrencyFixture(t *testing.T) (*httptest.Server, time.Time, time.Time) {
	t.Helper()
	db, err := tsdb.Open(t.TempDir(), nil, nil, tsdb.DefaultOptions(), nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	end := time.Now().Truncate(time.Minute)
	start := end.Add(-30 * time.Minute)
	app := db.AppenderV2(context.Background())
	rng := rand.New(rand.NewPCG(1, 2))
	add := func(ls labels.Labels, ts time.Time, v float64) {
		_, err := app.Append(0, ls, 0, ts.UnixMilli(), v, nil, nil, storage.AOptions{})
		require.NoError(t, err)
	}
	counters := make([]float64, 8)
	buckets := []string{"0.1", "0.5", "1", "5", "+Inf"}
	hist := make([][]float64, 4)
	for i := range hist {
		hist[i] = make([]float64, len(buckets))
	}
	for ts := start; !ts.After(end); ts = ts.Add(15 * time.Second) {
		for i := range 16 {
			// Gauges are strictly positive and large: a negative or small
			// number in abs(-gauge) can only be another query's point.
			add(labels.FromStrings("__name__", "gauge", "i", strconv.Itoa(i), "g", strconv.Itoa(i%4)), ts, 1e9+rng.Float64()*4e9)
		}
		for i := range counters {
			counters[i] += float64(rng.IntN(100))
			add(labels.FromStrings("__name__", "requests_total", "i", strconv.Itoa(i)), ts, counters[i])
		}
		for i := range hist {
			obs := rng.Float64() * 6
			for b, le := range buckets {
				if f, _ := strconv.ParseFloat(le, 64); obs <= f {
					hist[i][b]++
				}
				add(labels.FromStrings("__name__", "latency_seconds_bucket", "i", strconv.Itoa(i), "le", le), ts, hist[i][b])
			}
		}
	}
	require.NoError(t, app.Commit())
	engine := promql.NewEngine(promql.EngineOpts{MaxSamples: 50_000_000, Timeout: time.Minute, LookbackDelta: 5 * time.Minute})
	api, err := promapi.New(promapi.Options{Engine: engine, Queryable: db})
	require.NoError(t, err)
	srv := httptest.NewServer(api.Handler())
	t.Cleanup(srv.Close)
	return srv, start, end
}

type concurrencyCase struct {
	path string
	form url.Values
}

func (c concurrencyCase) String() string { return c.path + "?" + c.form.Encode() }

// TestConcurrentQueriesKeepTheirOwnPoints runs many different queries at
// once through the HTTP API: each answer must equal the answer the same
// query gets alone, and abs(-gauge) must never carry a negative value. The
// engine hands a query's point slices back to its pool on Close; closing
// before the response is encoded lets concurrent queries overwrite points
// in flight (seen under -race as a data race, and as foreign values).
func TestConcurrentQueriesKeepTheirOwnPoints(t *testing.T) {
	srv, start, end := concurrencyFixture(t)
	rng := func(q string, step string) concurrencyCase {
		return concurrencyCase{"/api/v1/query_range", url.Values{"query": {q}, "start": {unix(start)}, "end": {unix(end)}, "step": {step}}}
	}
	inst := func(q string) concurrencyCase {
		return concurrencyCase{"/api/v1/query", url.Values{"query": {q}, "time": {unix(end)}}}
	}
	cases := []concurrencyCase{
		rng(`abs(-gauge)`, "15s"),
		rng(`-gauge`, "15s"),
		rng(`gauge * 2`, "30s"),
		rng(`gauge / 1e9`, "15s"),
		rng(`rate(requests_total[1m])`, "15s"),
		rng(`sum by (g) (gauge)`, "15s"),
		rng(`max_over_time(gauge[2m])`, "45s"),
		rng(`histogram_quantile(0.9, sum by (le) (rate(latency_seconds_bucket[2m])))`, "15s"),
		rng(`gauge offset 5m`, "1m"),
		rng(`label_replace(gauge, "copy", "$1", "i", "(.*)")`, "15s"),
		rng(`requests_total - requests_total offset 1m`, "20s"),
		inst(`gauge[10m]`),
		inst(`requests_total[5m]`),
		inst(`rate(requests_total[5m])[10m:30s]`),
		inst(`abs(-gauge)`),
		inst(`topk(5, gauge)`),
	}
	client := srv.Client()
	get := func(c concurrencyCase) (string, error) {
		resp, err := client.Get(srv.URL + c.path + "?" + c.form.Encode())
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return "", err
		}
		if resp.StatusCode != http.StatusOK {
			return "", fmt.Errorf("%s: %s", resp.Status, body)
		}
		return canonical(body)
	}
	want := make([]string, len(cases))
	for i, c := range cases {
		got, err := get(c)
		require.NoError(t, err, c.String())
		want[i] = got
	}
	// abs(-gauge) alone is sane: every value positive.
	requireNonNegative(t, want[0])

	const workers, perWorker = 8, 16
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		failures []string
	)
	for w := range workers {
		wg.Go(func() {
			for j := range perWorker {
				i := (w*7 + j*3) % len(cases)
				got, err := get(cases[i])
				if err == nil && got != want[i] {
					err = fmt.Errorf("answer differs from the same query run alone:\n got %.300s\nwant %.300s", got, want[i])
				}
				if err == nil && i == 0 {
					err = nonNegative(got)
				}
				if err != nil {
					mu.Lock()
					failures = append(failures, cases[i].String()+": "+err.Error())
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("%d of %d concurrent answers were wrong; first: %s", len(failures), workers*perWorker, failures[0])
	}
}

// canonical re-encodes a success envelope's data with the result entries
// sorted, so instant vectors compare regardless of series order.
func canonical(body []byte) (string, error) {
	var env struct {
		Status string `json:"status"`
		Data   struct {
			ResultType string            `json:"resultType"`
			Result     []json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return "", fmt.Errorf("decoding %q: %w", body, err)
	}
	rs := make([]string, len(env.Data.Result))
	for i, r := range env.Data.Result {
		rs[i] = string(r)
	}
	slices.Sort(rs)
	out, err := json.Marshal(map[string]any{"status": env.Status, "resultType": env.Data.ResultType, "result": rs})
	return string(out), err
}

func requireNonNegative(t *testing.T, canon string) {
	t.Helper()
	require.NoError(t, nonNegative(canon))
}

// nonNegative checks every value of a canonical matrix or vector answer.
func nonNegative(canon string) error {
	var c struct {
		Result []string `json:"result"`
	}
	if err := json.Unmarshal([]byte(canon), &c); err != nil {
		return err
	}
	for _, r := range c.Result {
		var s struct {
			Value  [2]any   `json:"value"`
			Values [][2]any `json:"values"`
		}
		if err := json.Unmarshal([]byte(r), &s); err != nil {
			return err
		}
		if s.Value[1] != nil {
			s.Values = append(s.Values, s.Value)
		}
		if len(s.Values) == 0 {
			return fmt.Errorf("series without points: %s", r)
		}
		for _, p := range s.Values {
			v, err := strconv.ParseFloat(p[1].(string), 64)
			if err != nil || v < 1e9 || math.IsNaN(v) {
				return fmt.Errorf("abs(-gauge) answered %v, impossible for gauges in [1e9, 5e9): %.200s", p[1], r)
			}
		}
	}
	return nil
}

// poisonQueryable hands out label names and values that live in a buffer
// its querier overwrites on Close, as storage.LabelQuerier allows ("not
// safe to use the strings beyond the lifetime of the querier"; a block's
// index symbols are such memory).
type poisonQueryable struct{ storage.Queryable }

func (p poisonQueryable) Querier(mint, maxt int64) (storage.Querier, error) {
	q, err := p.Queryable.Querier(mint, maxt)
	if err != nil {
		return nil, err
	}
	return &poisonQuerier{Querier: q}, nil
}

type poisonQuerier struct {
	storage.Querier
	bufs [][]byte
}

func (q *poisonQuerier) own(vals []string) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		b := []byte(v)
		q.bufs = append(q.bufs, b)
		out[i] = unsafe.String(unsafe.SliceData(b), len(b))
	}
	return out
}

func (q *poisonQuerier) LabelValues(ctx context.Context, name string, hints *storage.LabelHints, ms ...*labels.Matcher) ([]string, annotations.Annotations, error) {
	vals, ws, err := q.Querier.LabelValues(ctx, name, hints, ms...)
	return q.own(vals), ws, err
}

func (q *poisonQuerier) LabelNames(ctx context.Context, hints *storage.LabelHints, ms ...*labels.Matcher) ([]string, annotations.Annotations, error) {
	vals, ws, err := q.Querier.LabelNames(ctx, hints, ms...)
	return q.own(vals), ws, err
}

func (q *poisonQuerier) Close() error {
	for _, b := range q.bufs {
		for i := range b {
			b[i] = '#'
		}
	}
	return q.Querier.Close()
}

// TestLabelAnswersOutliveNoQuerier: /labels and /label/…/values encode
// their strings before the storage querier is closed.
func TestLabelAnswersOutliveNoQuerier(t *testing.T) {
	t.Parallel()
	db, err := tsdb.Open(t.TempDir(), nil, nil, tsdb.DefaultOptions(), nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	app := db.AppenderV2(context.Background())
	for _, node := range []string{"alpha", "beta"} {
		_, err := app.Append(0, labels.FromStrings("__name__", "up", "node", node), 0, time.Now().UnixMilli(), 1, nil, nil, storage.AOptions{})
		require.NoError(t, err)
	}
	require.NoError(t, app.Commit())
	engine := promql.NewEngine(promql.EngineOpts{MaxSamples: 1000, Timeout: time.Minute})
	api, err := promapi.New(promapi.Options{Engine: engine, Queryable: poisonQueryable{db}})
	require.NoError(t, err)
	h := api.Handler()
	code, e := do(t, h, http.MethodGet, "/api/v1/label/node/values", nil)
	require.Equal(t, http.StatusOK, code)
	require.JSONEq(t, `["alpha","beta"]`, string(e.Data))
	code, e = do(t, h, http.MethodGet, "/api/v1/labels", url.Values{"match[]": {`up`}})
	require.Equal(t, http.StatusOK, code)
	require.JSONEq(t, `["__name__","node"]`, string(e.Data))
}
