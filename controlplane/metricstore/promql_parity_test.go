package metricstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang/snappy"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/prompb"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane/metricstore"
)

// PromQL parity: a reference Prometheus built from the
// github.com/prometheus/prometheus module at the version in go.mod (the
// engine we embed) and our /prometheus API hold the same data and answer
// the same corpus of queries; every answer must be equal. Building the
// reference takes minutes, so this runs only with HETEROFLOW_PROMQL_PARITY=1
// (the binary is cached under the user cache directory, or named by
// HETEROFLOW_REFERENCE_PROMETHEUS).

const prometheusModule = "github.com/prometheus/prometheus"

// referencePrometheus returns the reference binary, building it once.
func referencePrometheus(t *testing.T) (bin, version string) {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", prometheusModule).Output()
	require.NoError(t, err, "go list -m %s", prometheusModule)
	version = strings.TrimSpace(string(out))
	if p := os.Getenv("HETEROFLOW_REFERENCE_PROMETHEUS"); p != "" {
		return p, version
	}
	cache, err := os.UserCacheDir()
	require.NoError(t, err)
	bin = filepath.Join(cache, "heteroflow", "prometheus-"+version, "prometheus")
	if _, err := os.Stat(bin); err == nil {
		return bin, version
	}
	t.Logf("building the reference Prometheus %s@%s into %s (takes minutes, once)", prometheusModule, version, bin)
	dir := t.TempDir()
	run := func(args ...string) {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "go %s:\n%s", strings.Join(args, " "), out)
	}
	run("mod", "init", "heteroflow.local/referenceprometheus")
	run("get", prometheusModule+"/cmd/prometheus@"+version)
	require.NoError(t, os.MkdirAll(filepath.Dir(bin), 0o755))
	// Service discovery plugins are irrelevant to queries and slow to
	// build; netgo needs no C toolchain.
	run("build", "-tags", "remove_all_sd,netgo", "-o", bin+".tmp", prometheusModule+"/cmd/prometheus")
	require.NoError(t, os.Rename(bin+".tmp", bin))
	return bin, version
}

// parityData is the fixture both stores receive by remote write: one hour
// at 15 s of gauges, counters with a reset, classic histograms, a series
// that goes stale and comes back, special values, a gap, and UTF-8 metric
// and label names.
func parityData(end time.Time) []prompb.TimeSeries {
	const step = 15 * time.Second
	start := end.Add(-time.Hour)
	rng := rand.New(rand.NewPCG(3, 5))
	var out []prompb.TimeSeries
	series := func(ls ...string) *prompb.TimeSeries {
		ts := prompb.TimeSeries{}
		for i := 0; i < len(ls); i += 2 {
			ts.Labels = append(ts.Labels, prompb.Label{Name: ls[i], Value: ls[i+1]})
		}
		sort.Slice(ts.Labels, func(a, b int) bool { return ts.Labels[a].Name < ts.Labels[b].Name })
		out = append(out, ts)
		return &out[len(out)-1]
	}
	each := func(f func(i int, t int64)) {
		i := 0
		for t := start; !t.After(end); t = t.Add(step) {
			f(i, t.UnixMilli())
			i++
		}
	}
	instances := []string{"demo-service-0:10000", "demo-service-1:10001", "demo-service-2:10002"}
	for ii, inst := range instances {
		for _, typ := range []string{"buffers", "cached", "free", "used", "slab"} {
			s := series("__name__", "demo_memory_usage_bytes", "instance", inst, "job", "demo", "type", typ)
			v := 1e9 + rng.Float64()*3e9
			each(func(_ int, t int64) {
				v = math.Max(1e8, v+(rng.Float64()-0.5)*4e8)
				s.Samples = append(s.Samples, prompb.Sample{Timestamp: t, Value: math.Round(v)})
			})
		}
		for mi, mode := range []string{"idle", "user", "system"} {
			s := series("__name__", "demo_cpu_usage_seconds_total", "instance", inst, "job", "demo", "mode", mode)
			c := 0.0
			each(func(i int, t int64) {
				if ii == 1 && mi == 1 && i == 120 {
					c = 0 // a counter reset
				}
				c += rng.Float64() * 15
				s.Samples = append(s.Samples, prompb.Sample{Timestamp: t, Value: c})
			})
		}
		s := series("__name__", "demo_num_cpus", "instance", inst, "job", "demo")
		each(func(_ int, t int64) {
			s.Samples = append(s.Samples, prompb.Sample{Timestamp: t, Value: float64(int(4) << ii)})
		})
		s = series("__name__", "demo_batch_last_success_timestamp_seconds", "instance", inst, "job", "demo")
		each(func(i int, t int64) {
			s.Samples = append(s.Samples, prompb.Sample{Timestamp: t, Value: float64((t/1000)/300*300 - int64(ii)*60)})
		})
		les := []string{"0.0001", "0.00025", "0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "+Inf"}
		for _, method := range []string{"GET", "POST"} {
			bs := make([]*prompb.TimeSeries, len(les))
			for j, le := range les {
				bs[j] = series("__name__", "demo_api_request_duration_seconds_bucket", "instance", inst, "job", "demo", "method", method, "path", "/api/foo", "le", le)
			}
			sum := series("__name__", "demo_api_request_duration_seconds_sum", "instance", inst, "job", "demo", "method", method, "path", "/api/foo")
			cnt := series("__name__", "demo_api_request_duration_seconds_count", "instance", inst, "job", "demo", "method", method, "path", "/api/foo")
			counts := make([]float64, len(les))
			total := 0.0
			each(func(_ int, t int64) {
				for range rng.IntN(40) {
					obs := math.Exp(rng.NormFloat64()*1.5 - 5)
					total += obs
					for j, le := range les {
						if f, _ := strconv.ParseFloat(le, 64); obs <= f {
							counts[j]++
						}
					}
				}
				for j := range les {
					bs[j].Samples = append(bs[j].Samples, prompb.Sample{Timestamp: t, Value: counts[j]})
				}
				sum.Samples = append(sum.Samples, prompb.Sample{Timestamp: t, Value: total})
				cnt.Samples = append(cnt.Samples, prompb.Sample{Timestamp: t, Value: counts[len(les)-1]})
			})
		}
		// Present for the first third, a staleness marker, back for the last third.
		s = series("__name__", "demo_intermittent_metric", "instance", inst, "job", "demo")
		n := int(time.Hour/step) + 1
		each(func(i int, t int64) {
			switch {
			case i < n/3:
				s.Samples = append(s.Samples, prompb.Sample{Timestamp: t, Value: float64(i * (ii + 1))})
			case i == n/3:
				s.Samples = append(s.Samples, prompb.Sample{Timestamp: t, Value: math.Float64frombits(value.StaleNaN)})
			case i >= 2*n/3:
				s.Samples = append(s.Samples, prompb.Sample{Timestamp: t, Value: float64(i)})
			}
		})
		// A gap of 10 minutes without a staleness marker.
		s = series("__name__", "demo_gappy", "instance", inst, "job", "demo")
		each(func(i int, t int64) {
			if i < 100 || i >= 140 {
				s.Samples = append(s.Samples, prompb.Sample{Timestamp: t, Value: float64(i % 7)})
			}
		})
		s = series("__name__", "demo_items", "instance", inst, "job", "demo", "a", "x"+strconv.Itoa(ii), "b", "ÿ-"+strconv.Itoa(ii))
		each(func(i int, t int64) {
			s.Samples = append(s.Samples, prompb.Sample{Timestamp: t, Value: float64(i%11) - 5})
		})
	}
	for _, kv := range []struct {
		kind string
		v    float64
	}{{"nan", math.NaN()}, {"inf", math.Inf(1)}, {"neg_inf", math.Inf(-1)}, {"zero", 0}, {"negative", -2.5}, {"tiny", 1e-300}, {"huge", 1e300}} {
		s := series("__name__", "demo_special_values", "job", "demo", "kind", kv.kind)
		each(func(_ int, t int64) {
			s.Samples = append(s.Samples, prompb.Sample{Timestamp: t, Value: kv.v})
		})
	}
	for _, method := range []string{"GET", "POST"} {
		s := series("__name__", "demo.utf8.requests", "service.name", "checkout", "http.method", method, "名前", "値", "job", "demo")
		c := 0.0
		each(func(_ int, t int64) {
			c += float64(rng.IntN(100))
			s.Samples = append(s.Samples, prompb.Sample{Timestamp: t, Value: c})
		})
	}
	return out
}

// pushAll remote-writes the fixture in time order, ten minutes a request.
func pushAll(t *testing.T, writeURL string, data []prompb.TimeSeries, start, end time.Time) {
	t.Helper()
	for from := start.Add(-time.Minute); from.Before(end.Add(time.Minute)); from = from.Add(10 * time.Minute) {
		to := from.Add(10 * time.Minute)
		var req prompb.WriteRequest
		for _, s := range data {
			part := prompb.TimeSeries{Labels: s.Labels}
			for _, smp := range s.Samples {
				if ts := time.UnixMilli(smp.Timestamp); !ts.Before(from) && ts.Before(to) {
					part.Samples = append(part.Samples, smp)
				}
			}
			if len(part.Samples) > 0 {
				req.Timeseries = append(req.Timeseries, part)
			}
		}
		raw, err := req.Marshal()
		require.NoError(t, err)
		hr, err := http.NewRequest(http.MethodPost, writeURL, bytes.NewReader(snappy.Encode(nil, raw)))
		require.NoError(t, err)
		hr.Header.Set("Content-Encoding", "snappy")
		hr.Header.Set("Content-Type", "application/x-protobuf")
		hr.Header.Set("X-Prometheus-Remote-Write-Version", "0.1.0")
		resp, err := http.DefaultClient.Do(hr)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		require.Less(t, resp.StatusCode, 300, "%s: %s", writeURL, body)
	}
}

// parityCorpus is the hand-written part of the corpus; functionCorpus adds
// every non-experimental function.
func parityCorpus(start, end time.Time) []string {
	at := strconv.FormatInt(start.Add(20*time.Minute).Unix(), 10)
	return []string{
		// Selectors.
		`demo_memory_usage_bytes`,
		`demo_memory_usage_bytes{type="used"}`,
		`demo_memory_usage_bytes{type!="used"}`,
		`demo_memory_usage_bytes{type=~"c.*|f.*"}`,
		`demo_memory_usage_bytes{type!~"c.*"}`,
		`{__name__=~"demo_(memory|num).*", instance="demo-service-1:10001"}`,
		`{__name__="demo_num_cpus"}`,
		`demo_memory_usage_bytes{type=""}`,
		`demo_memory_usage_bytes{nonexistent=""}`,
		`nonexistent_metric`,
		`demo_cpu_usage_seconds_total[1m]`,
		`demo_intermittent_metric`,
		`demo_intermittent_metric[20m]`,
		`demo_gappy`,
		`demo_special_values`,
		// UTF-8 metric and label names (Prometheus 3 syntax).
		`{"demo.utf8.requests"}`,
		`{"demo.utf8.requests", "service.name"="checkout"}`,
		`{"demo.utf8.requests", "名前"="値", "http.method"=~"G.*"}`,
		`sum by ("service.name", "http.method") (rate({"demo.utf8.requests"}[5m]))`,
		`sum without ("名前") ({"demo.utf8.requests"})`,
		`label_replace(demo_memory_usage_bytes, "new.label", "$1-ü", "type", "(.*)")`,
		`label_replace({"demo.utf8.requests"}, "名前", "$1", "http.method", "(.)(.*)")`,
		`label_join(demo_items, "joined.ünicode", "-", "a", "b")`,
		`label_join(demo_items, "joined", "", "a", "b", "instance")`,
		`label_join(demo_items, "a", ",")`,
		`label_replace(demo_memory_usage_bytes, "type", "$2", "instance", "(.*):(.*)")`,
		`label_replace(demo_memory_usage_bytes, "x", "", "type", "nomatch")`,
		// Aggregations.
		`sum(demo_memory_usage_bytes)`,
		`sum by (instance) (demo_memory_usage_bytes)`,
		`sum without (type) (demo_memory_usage_bytes)`,
		`avg without (instance) (demo_memory_usage_bytes)`,
		`min by (type) (demo_memory_usage_bytes)`,
		`max by (instance, type) (demo_memory_usage_bytes)`,
		`count without () (demo_memory_usage_bytes)`,
		`count(demo_memory_usage_bytes)`,
		`group by (instance) (demo_memory_usage_bytes)`,
		`stddev by (instance) (demo_memory_usage_bytes)`,
		`stdvar(demo_memory_usage_bytes)`,
		`topk(3, demo_memory_usage_bytes)`,
		`topk by (instance) (1, demo_memory_usage_bytes)`,
		`bottomk(2, demo_memory_usage_bytes)`,
		`quantile(0.9, demo_memory_usage_bytes)`,
		`quantile by (instance) (0.5, demo_memory_usage_bytes)`,
		`quantile(2, demo_memory_usage_bytes)`,
		`count_values("value", demo_num_cpus)`,
		`count_values by (instance) ("le.ü", demo_num_cpus)`,
		`sum(demo_special_values)`,
		`avg(demo_special_values)`,
		`max(demo_special_values)`,
		`min(demo_special_values)`,
		`topk(2, demo_special_values)`,
		`sum by (instance) (rate(demo_cpu_usage_seconds_total[5m]))`,
		`avg(rate(demo_cpu_usage_seconds_total{mode!="idle"}[5m])) by (instance)`,
		`sort(sum by (instance) (demo_memory_usage_bytes))`,
		`sort_desc(max by (type) (demo_memory_usage_bytes))`,
		// Binary operators and vector matching.
		`demo_memory_usage_bytes + 1`,
		`1 - demo_memory_usage_bytes`,
		`demo_memory_usage_bytes * 2 / 3 % 7 ^ 0.5`,
		`demo_memory_usage_bytes > 2e9`,
		`demo_memory_usage_bytes > bool 2e9`,
		`demo_memory_usage_bytes == 0`,
		`-demo_memory_usage_bytes`,
		`abs(-demo_memory_usage_bytes)`,
		`demo_memory_usage_bytes / on(instance) group_left demo_num_cpus`,
		`demo_memory_usage_bytes / ignoring(type) group_left demo_num_cpus`,
		`demo_num_cpus * on(instance) group_right demo_memory_usage_bytes`,
		`demo_memory_usage_bytes{type="used"} / ignoring(type) demo_memory_usage_bytes{type="free"}`,
		`demo_memory_usage_bytes and demo_memory_usage_bytes > 2e9`,
		`demo_memory_usage_bytes or demo_num_cpus`,
		`demo_memory_usage_bytes unless demo_memory_usage_bytes{type="used"}`,
		`demo_memory_usage_bytes unless on(instance) demo_num_cpus`,
		`sum by (instance) (demo_memory_usage_bytes) / on(instance) group_left demo_num_cpus`,
		`demo_memory_usage_bytes * on(instance) group_left(job) demo_num_cpus`,
		`scalar(sum(demo_num_cpus)) * demo_num_cpus`,
		`2 ^ 3 ^ 2`,
		`1 + 2 * 3`,
		`demo_special_values / 0`,
		`demo_special_values > bool 0`,
		`demo_special_values atan2 demo_special_values`,
		`demo_memory_usage_bytes atan2 1e9`,
		`demo_num_cpus == bool on(instance) demo_num_cpus`,
		`(demo_memory_usage_bytes > 1e9) + on(instance, type) (demo_memory_usage_bytes < 3e9)`,
		// Counters, rates and range functions over resets and staleness.
		`rate(demo_cpu_usage_seconds_total[5m])`,
		`irate(demo_cpu_usage_seconds_total[1m])`,
		`increase(demo_cpu_usage_seconds_total[10m])`,
		`resets(demo_cpu_usage_seconds_total[30m])`,
		`changes(demo_batch_last_success_timestamp_seconds[30m])`,
		`delta(demo_memory_usage_bytes[5m])`,
		`idelta(demo_memory_usage_bytes[5m])`,
		`deriv(demo_memory_usage_bytes[10m])`,
		`predict_linear(demo_memory_usage_bytes[10m], 3600)`,
		`quantile_over_time(1, demo_memory_usage_bytes[1h])`,
		`quantile_over_time(0.25, demo_memory_usage_bytes[10m])`,
		`avg_over_time(demo_intermittent_metric[10m])`,
		`count_over_time(demo_intermittent_metric[10m])`,
		`last_over_time(demo_intermittent_metric[10m])`,
		`present_over_time(demo_intermittent_metric[10m])`,
		`absent_over_time(demo_intermittent_metric[5m])`,
		`absent(demo_intermittent_metric)`,
		`absent(nonexistent_metric{job="x"})`,
		`count_over_time(demo_gappy[5m])`,
		`rate(demo_gappy[5m])`,
		`timestamp(demo_intermittent_metric)`,
		`timestamp(demo_memory_usage_bytes offset 1m)`,
		// Subqueries.
		`max_over_time(rate(demo_cpu_usage_seconds_total[5m])[30m:1m])`,
		`min_over_time(demo_memory_usage_bytes[10m:])`,
		`rate(demo_cpu_usage_seconds_total[5m])[10m:2m]`,
		`avg_over_time(sum by (instance) (demo_memory_usage_bytes)[15m:30s] offset 5m)`,
		`sum_over_time(deriv(demo_memory_usage_bytes[5m])[20m:45s])`,
		`quantile_over_time(0.9, (demo_memory_usage_bytes > 2e9)[20m:1m])`,
		// Offset and @.
		`demo_memory_usage_bytes offset 5m`,
		`demo_memory_usage_bytes offset -5m`,
		`rate(demo_cpu_usage_seconds_total[5m] offset 10m)`,
		`demo_memory_usage_bytes @ ` + at,
		`rate(demo_cpu_usage_seconds_total[5m] @ ` + at + `)`,
		`demo_memory_usage_bytes @ start()`,
		`demo_memory_usage_bytes @ end()`,
		`sum(demo_memory_usage_bytes @ end() offset 10m)`,
		`demo_memory_usage_bytes - demo_memory_usage_bytes offset 1h`,
		// Classic histograms.
		`histogram_quantile(0.9, rate(demo_api_request_duration_seconds_bucket[5m]))`,
		`histogram_quantile(0.5, sum by (le) (rate(demo_api_request_duration_seconds_bucket[5m])))`,
		`histogram_quantile(0.99, sum by (le, method) (rate(demo_api_request_duration_seconds_bucket[10m])))`,
		`histogram_quantile(0, sum by (le) (rate(demo_api_request_duration_seconds_bucket[5m])))`,
		`histogram_quantile(1, sum by (le) (rate(demo_api_request_duration_seconds_bucket[5m])))`,
		`histogram_quantile(1.5, sum by (le) (rate(demo_api_request_duration_seconds_bucket[5m])))`,
		`histogram_quantile(-1, sum by (le) (rate(demo_api_request_duration_seconds_bucket[5m])))`,
		`histogram_quantile(0.9, demo_api_request_duration_seconds_bucket)`,
		`histogram_quantile(0.9, sum without (le) (demo_api_request_duration_seconds_bucket))`,
		`histogram_quantile(0.5, rate(demo_api_request_duration_seconds_bucket{le!="0.001"}[5m]))`,
		`histogram_fraction(0, 0.01, sum by (le) (rate(demo_api_request_duration_seconds_bucket[5m])))`,
		`rate(demo_api_request_duration_seconds_sum[5m]) / rate(demo_api_request_duration_seconds_count[5m])`,
		// Scalars and strings.
		`1`,
		`-1.5e3`,
		`Inf`,
		`-NaN`,
		`"a string"`,
		`time()`,
		`vector(time())`,
		`scalar(demo_memory_usage_bytes)`,
		`scalar(demo_num_cpus{instance="demo-service-0:10000"})`,
		`0x1F`,
		`1h30m`,
		// Queries that must fail, with the same error.
		`sum(`,
		`demo_memory_usage_bytes{`,
		`rate(demo_memory_usage_bytes)`,
		`{__name__=~".*"}`,
		`demo_memory_usage_bytes[5m:1m:1m]`,
		`histogram_quantile("a", demo_memory_usage_bytes)`,
		`label_replace(demo_memory_usage_bytes, "dst", "$1", "src", "(")`,
		`label_replace(demo_memory_usage_bytes, "type", "same", "", "")`,
		`demo_memory_usage_bytes * on() demo_num_cpus`,
		`demo_memory_usage_bytes + on(instance) demo_memory_usage_bytes`,
		`demo_num_cpus / on(instance) group_left demo_memory_usage_bytes`,
		`nonexistent_function(demo_num_cpus)`,
		`sum by (instance) (demo_memory_usage_bytes) offset 5m`,
		`demo_memory_usage_bytes @ "x"`,
		`"string" + 1`,
		`topk("x", demo_memory_usage_bytes)`,
		// Experimental functions and aggregators are off in both.
		`mad_over_time(demo_memory_usage_bytes[5m])`,
		`sort_by_label(demo_memory_usage_bytes, "type")`,
		`limitk(2, demo_memory_usage_bytes)`,
		`limit_ratio(0.5, demo_memory_usage_bytes)`,
	}
}

// functionCorpus calls every non-experimental PromQL function with
// arguments of its declared types.
func functionCorpus() []string {
	var names []string
	for n, f := range parser.Functions {
		if !f.Experimental {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var out []string
	for _, n := range names {
		f := parser.Functions[n]
		switch n {
		case "label_replace", "label_join", "histogram_quantile", "histogram_fraction", "scalar", "vector", "absent", "sort", "sort_desc":
			continue // in the hand-written corpus with meaningful arguments
		}
		variants := [][]string{{}}
		for i, at := range f.ArgTypes {
			var choices []string
			switch at {
			case parser.ValueTypeVector:
				choices = []string{`demo_memory_usage_bytes / 1e9`, `demo_special_values`}
				if strings.HasPrefix(n, "histogram_") {
					choices = []string{`demo_api_request_duration_seconds_bucket`, `rate(demo_api_request_duration_seconds_bucket[5m])`}
				}
				if f.Variadic == 1 && i == len(f.ArgTypes)-1 && len(f.ArgTypes) == 1 {
					choices = []string{"", `demo_batch_last_success_timestamp_seconds`}
				}
			case parser.ValueTypeMatrix:
				choices = []string{`demo_memory_usage_bytes[5m]`, `demo_cpu_usage_seconds_total[10m]`, `demo_intermittent_metric[10m]`}
			case parser.ValueTypeScalar:
				choices = []string{`0.5`}
				if n == "round" {
					choices = []string{"", "0.5", "1e8"}
				}
				if n == "clamp" && i == 2 {
					choices = []string{"3", "-1"}
				}
			}
			var next [][]string
			for _, v := range variants {
				for _, c := range choices {
					next = append(next, append(slices.Clone(v), c))
				}
			}
			variants = next
		}
		for _, v := range variants {
			args := slices.DeleteFunc(v, func(s string) bool { return s == "" })
			out = append(out, n+"("+strings.Join(args, ", ")+")")
		}
	}
	return out
}

// parityAnswer is one API answer reduced to what must be equal.
type parityAnswer struct {
	HTTPStatus int
	Status     string
	ErrorType  string
	Error      string
	ResultType string
	Result     string // canonical JSON
	Warnings   []string
	Infos      []string
}

func (a parityAnswer) brief() string {
	r := a.Result
	if len(r) > 600 {
		r = r[:600] + "…"
	}
	return fmt.Sprintf("%d %s %s %q %s %s warnings=%q infos=%q", a.HTTPStatus, a.Status, a.ErrorType, a.Error, a.ResultType, r, a.Warnings, a.Infos)
}

func parityQuery(ctx context.Context, base, path string, form neturl.Values, sorted bool) (parityAnswer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path+"?"+form.Encode(), nil)
	if err != nil {
		return parityAnswer{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return parityAnswer{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return parityAnswer{}, err
	}
	var env struct {
		Status    string   `json:"status"`
		ErrorType string   `json:"errorType"`
		Error     string   `json:"error"`
		Warnings  []string `json:"warnings"`
		Infos     []string `json:"infos"`
		Data      struct {
			ResultType string          `json:"resultType"`
			Result     json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return parityAnswer{}, fmt.Errorf("%s: %s: %.300s", base, resp.Status, body)
	}
	a := parityAnswer{HTTPStatus: resp.StatusCode, Status: env.Status, ErrorType: env.ErrorType, Error: env.Error, ResultType: env.Data.ResultType}
	a.Warnings, a.Infos = slices.Sorted(slices.Values(env.Warnings)), slices.Sorted(slices.Values(env.Infos))
	if len(env.Data.Result) > 0 {
		var items []json.RawMessage
		if json.Unmarshal(env.Data.Result, &items) == nil && env.Data.ResultType != "scalar" && env.Data.ResultType != "string" {
			strs := make([]string, len(items))
			for i, it := range items {
				var v any
				if err := json.Unmarshal(it, &v); err != nil {
					return a, err
				}
				b, _ := json.Marshal(v) // canonical: sorted keys
				strs[i] = string(b)
			}
			if sorted {
				slices.Sort(strs)
			}
			a.Result = "[" + strings.Join(strs, ",") + "]"
		} else {
			a.Result = string(env.Data.Result)
		}
	}
	return a, nil
}

// TestPromQLParityWithReferencePrometheus: see the file comment.
func TestPromQLParityWithReferencePrometheus(t *testing.T) {
	if os.Getenv("HETEROFLOW_PROMQL_PARITY") == "" {
		t.Skip("set HETEROFLOW_PROMQL_PARITY=1 to build the reference Prometheus at go.mod's version and compare PromQL answers")
	}
	bin, version := referencePrometheus(t)

	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "prometheus.yml")
	require.NoError(t, os.WriteFile(cfgFile, []byte("global: {}\n"), 0o600))
	refAddr := freeAddr(t)
	startProcess(t, refAddr, "/-/ready", bin,
		"--config.file="+cfgFile, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+refAddr, "--web.enable-remote-write-receiver")
	ref := "http://" + refAddr

	cfg := metricstore.Defaults()
	cfg.Dir = t.TempDir()
	store, err := metricstore.Open(cfg, metricstore.Options{Logger: quiet})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, store.Close()) })
	srv := serve(t, store)
	ours := srv.URL + "/prometheus"

	end := time.Now().Truncate(time.Minute).Add(-2 * time.Minute)
	start := end.Add(-time.Hour)
	data := parityData(end)
	pushAll(t, ref+"/api/v1/write", data, start, end)
	pushAll(t, srv.URL+"/api/v1/write", data, start, end)

	queries := append(parityCorpus(start, end), functionCorpus()...)
	// Every non-experimental function and every aggregator is exercised.
	for n, f := range parser.Functions {
		if !f.Experimental && !slices.ContainsFunc(queries, func(q string) bool { return strings.Contains(q, n+"(") }) {
			t.Errorf("the corpus does not call %s", n)
		}
	}
	for _, agg := range []string{"sum", "avg", "min", "max", "count", "group", "stddev", "stdvar", "topk", "bottomk", "quantile", "count_values"} {
		if !slices.ContainsFunc(queries, func(q string) bool {
			return strings.Contains(q, agg+"(") || strings.Contains(q, agg+" by") || strings.Contains(q, agg+" without")
		}) {
			t.Errorf("the corpus does not use the aggregator %s", agg)
		}
	}

	type check struct {
		name, path string
		form       neturl.Values
		sorted     bool
	}
	var checks []check
	unix := func(t time.Time) string { return strconv.FormatInt(t.Unix(), 10) }
	for _, q := range queries {
		sorted := !strings.Contains(q, "sort")
		checks = append(checks,
			check{"range " + q, "/api/v1/query_range", neturl.Values{"query": {q}, "start": {unix(start.Add(10 * time.Minute))}, "end": {unix(end)}, "step": {"30s"}}, sorted},
			check{"instant@end " + q, "/api/v1/query", neturl.Values{"query": {q}, "time": {unix(end)}}, sorted},
			check{"instant@mid " + q, "/api/v1/query", neturl.Values{"query": {q}, "time": {unix(start.Add(31*time.Minute + 7*time.Second))}}, sorted},
		)
	}
	var (
		mu    sync.Mutex
		diffs []string
		kinds = map[string]int{}
		wg    sync.WaitGroup
		work  = make(chan check)
	)
	ctx := t.Context()
	for range 8 {
		wg.Go(func() {
			for c := range work {
				a, errA := parityQuery(ctx, ref, c.path, c.form, c.sorted)
				b, errB := parityQuery(ctx, ours, c.path, c.form, c.sorted)
				mu.Lock()
				switch {
				case errA != nil:
				case a.Status == "error":
					kinds["error"]++
				case a.Result == "[]" || a.Result == "":
					kinds["empty"]++
				default:
					kinds["data"]++
				}
				mu.Unlock()
				var d string
				switch {
				case errA != nil || errB != nil:
					d = fmt.Sprintf("%s: reference error %v, ours %v", c.name, errA, errB)
				case fmt.Sprint(a) != fmt.Sprint(b):
					d = fmt.Sprintf("%s:\n  reference %s\n  ours      %s", c.name, a.brief(), b.brief())
				}
				if d != "" {
					mu.Lock()
					diffs = append(diffs, d)
					mu.Unlock()
				}
			}
		})
	}
	for _, c := range checks {
		work <- c
	}
	close(work)
	wg.Wait()
	sort.Strings(diffs)
	t.Logf("PromQL parity with %s@%s (reference built from the module, %s): %d of %d answers equal (%d queries x range, instant at end, instant mid-window; reference answers: %d with data, %d empty, %d errors)",
		prometheusModule, version, bin, len(checks)-len(diffs), len(checks), len(queries), kinds["data"], kinds["empty"], kinds["error"])
	for _, d := range diffs {
		t.Error(d)
	}
}
