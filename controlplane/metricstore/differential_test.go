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
	"net/http/httptest"
	neturl "net/url"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang/snappy"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/prompb"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane/metricstore"
)

// The differential tests let Debian's real Prometheus scrape a synthetic
// target and remote-write everything into our server, then compare every
// sample of every series between Prometheus' query API and ours. Run them
// with -race (make test-integrity does) so our side is checked for races
// while many comparison queries run in parallel.

// requireBinaryOrCI skips without the binary on a developer machine and
// fails in CI (CI=true), where `make deps` must have installed it.
func requireBinaryOrCI(tb testing.TB, path string) {
	tb.Helper()
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("%s is required in CI (make deb-deps installs it): %v", path, err)
		}
		tb.Skipf("%s not installed; `make deb-deps` installs it (this test fails instead of skipping when CI=true): %v", path, err)
	}
}

// diffScale sizes one run.
type diffScale struct {
	gauges, counters, histograms, ephemeral int
	scrapes                                 int // successful scrapes before the target goes down
	interval                                time.Duration
	shards                                  [2]int // min and max remote-write shards
	batch                                   int    // max samples per remote-write request
	workers                                 int    // comparison queries in flight
	nameRounds                              int    // rounds of whole-metric-name answers among the per-series ones
}

func (s diffScale) withSoak() diffScale {
	if os.Getenv("HETEROFLOW_SOAK") == "" {
		return s
	}
	s.gauges, s.counters, s.histograms, s.ephemeral = 2000, 1000, 100, 500
	s.scrapes = 300
	s.interval = 500 * time.Millisecond
	s.nameRounds = 2 // whole names are answers of up to 600k samples here
	s.shards = [2]int{8, 16}
	s.batch = 200
	s.workers = 16
	if v, err := strconv.Atoi(os.Getenv("HETEROFLOW_SOAK_SCRAPES")); err == nil && v > 0 {
		s.scrapes = v
	}
	return s
}

var defaultDiffScale = diffScale{
	gauges: 120, counters: 60, histograms: 12, ephemeral: 30,
	scrapes: 20, interval: time.Second,
	shards: [2]int{4, 8}, batch: 25, workers: 16, nameRounds: 8,
}

// diffTarget serves Prometheus text exposition whose values change at
// every scrape: gauges (positive, negative, tiny, integral), counters with
// occasional resets, classic histograms, and series that come and go. All
// values have at most 12 significant digits so that stores which keep
// decimals (VictoriaMetrics) hold them exactly.
type diffTarget struct {
	s        diffScale
	mu       sync.Mutex
	rng      *rand.Rand
	n        int
	counters []float64
	hist     [][]float64 // per histogram: cumulative bucket counts, then sum
	down     atomic.Bool
	scraped  chan int
}

var diffBuckets = []string{"0.005", "0.01", "0.05", "0.1", "0.5", "1", "5", "10", "+Inf"}

func newDiffTarget(s diffScale) *diffTarget {
	d := &diffTarget{s: s, rng: rand.New(rand.NewPCG(7, 11)), counters: make([]float64, s.counters), scraped: make(chan int, 1<<16)}
	d.hist = make([][]float64, s.histograms)
	for i := range d.hist {
		d.hist[i] = make([]float64, len(diffBuckets)+1)
	}
	return d
}

func (d *diffTarget) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	if d.down.Load() {
		http.Error(w, "target stopped", http.StatusServiceUnavailable)
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	n := d.n
	d.n++
	var b strings.Builder
	b.WriteString("# HELP diff_gauge A gauge.\n# TYPE diff_gauge gauge\n")
	for i := range d.s.gauges {
		var v float64
		switch i % 4 {
		case 0:
			v = float64(d.rng.Int64N(1e12)) / 1e3 // up to 1e9, three decimals
		case 1:
			v = -float64(d.rng.Int64N(1e9)) / 1e2
		case 2:
			v = float64(d.rng.Int64N(1e6)) / 1e12
		default:
			v = float64(d.rng.Int64N(1000))
		}
		fmt.Fprintf(&b, "diff_gauge{i=\"%d\",zone=\"z%d\"} %s\n", i, i%5, strconv.FormatFloat(v, 'g', -1, 64))
	}
	b.WriteString("# HELP diff_requests_total A counter.\n# TYPE diff_requests_total counter\n")
	for i := range d.counters {
		if d.rng.IntN(50) == 0 {
			d.counters[i] = 0 // a restart
		}
		d.counters[i] += float64(d.rng.IntN(1000))
		fmt.Fprintf(&b, "diff_requests_total{i=\"%d\",code=\"%d\"} %s\n", i, 200+100*(i%4), strconv.FormatFloat(d.counters[i], 'g', -1, 64))
	}
	b.WriteString("# HELP diff_latency_seconds A classic histogram.\n# TYPE diff_latency_seconds histogram\n")
	for i, h := range d.hist {
		for range d.rng.IntN(20) {
			obs := d.rng.Float64() * 12
			for j, le := range diffBuckets {
				if f, _ := strconv.ParseFloat(le, 64); obs <= f {
					h[j]++
				}
			}
			h[len(diffBuckets)] += math.Round(obs*1000) / 1000
		}
		route := fmt.Sprintf("/r%d", i)
		for j, le := range diffBuckets {
			fmt.Fprintf(&b, "diff_latency_seconds_bucket{route=%q,le=%q} %g\n", route, le, h[j])
		}
		fmt.Fprintf(&b, "diff_latency_seconds_sum{route=%q} %s\n", route, strconv.FormatFloat(math.Round(h[len(diffBuckets)]*1000)/1000, 'g', -1, 64))
		fmt.Fprintf(&b, "diff_latency_seconds_count{route=%q} %g\n", route, h[len(diffBuckets)-1])
	}
	// Series that come and go: series i exists in scrapes where
	// (n/3 + i) % 3 != 0, so each disappears (a staleness marker) and returns.
	b.WriteString("# TYPE diff_ephemeral gauge\n")
	for i := range d.s.ephemeral {
		if (n/3+i)%3 != 0 {
			fmt.Fprintf(&b, "diff_ephemeral{i=\"%d\",gen=\"%d\"} %d\n", i, (n/9+i)%4, d.rng.IntN(1e6))
		}
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	_, _ = io.WriteString(w, b.String())
	select {
	case d.scraped <- n:
	default:
	}
}

// diffEnv is one differential run: the reference Prometheus and our
// /prometheus API, both holding the target's data.
type diffEnv struct {
	promURL, oursURL string
	start            time.Time
	store            *metricstore.Store
	remote           bool
	tap              *writeTap // remote mode: what our forwarder sent
}

// startDifferential starts the target, our server (embedded, or remote
// mode over VictoriaMetrics) and Prometheus scraping the target and
// remote-writing to us; it returns once the target has gone down after
// s.scrapes scrapes and Prometheus has recorded that.
func startDifferential(t *testing.T, s diffScale, remote bool) (diffEnv, *diffTarget) {
	t.Helper()
	requireBinaryOrCI(t, prometheusBin)
	var (
		store *metricstore.Store
		tap   *writeTap
	)
	if remote {
		requireBinaryOrCI(t, victoriaBin)
		addr := startVictoria(t)
		cfg := metricstore.Defaults()
		cfg.Mode = metricstore.ModeRemote
		cfg.Remote.QueryURL = url(addr, "")
		// Our forwarder writes through a tap that records every sample it
		// sends, so what we write and what the store returns are both checked.
		tap = newWriteTap(t, url(addr, "/api/v1/write"))
		cfg.Remote.WriteURL = tap.url
		var err error
		store, err = metricstore.Open(cfg, metricstore.Options{Logger: quiet})
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, store.Close()) })
	} else {
		cfg := metricstore.Defaults()
		cfg.Dir = t.TempDir()
		// The comparison is about data, not latency: whole-name answers of
		// the soak run (600k samples, -race, a loaded 2-core machine) may
		// take longer than the default 2 minutes.
		cfg.Query.Timeout = 15 * time.Minute
		var err error
		store, err = metricstore.Open(cfg, metricstore.Options{Logger: quiet})
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, store.Close()) })
	}
	srv := serve(t, store)

	target := newDiffTarget(s)
	tsrv := httptest.NewServer(target)
	t.Cleanup(tsrv.Close)
	start := time.Now()
	cfg := fmt.Sprintf(`global: {scrape_interval: %[1]s, scrape_timeout: %[1]s, evaluation_interval: 1m}
scrape_configs:
  - job_name: diff
    static_configs: [{targets: [%[2]q]}]
remote_write:
  - url: %[3]s/api/v1/write
    queue_config: {min_shards: %[4]d, max_shards: %[5]d, capacity: %[6]d, max_samples_per_send: %[6]d, batch_send_deadline: 100ms, min_backoff: 30ms, max_backoff: 1s}
`, s.interval, strings.TrimPrefix(tsrv.URL, "http://"), srv.URL, s.shards[0], s.shards[1], s.batch)
	promAddr := startPrometheus(t, cfg)

	deadline := time.After(time.Duration(s.scrapes)*s.interval + time.Minute)
	for n := -1; n < s.scrapes-1; {
		select {
		case n = <-target.scraped:
		case <-deadline:
			t.Fatalf("Prometheus scraped the target only %d times", n+1)
		}
	}
	target.down.Store(true)
	// Two failed scrapes: Prometheus writes up=0 and staleness markers.
	time.Sleep(2*s.interval + s.interval/2)
	return diffEnv{promURL: "http://" + promAddr, oursURL: srv.URL + "/prometheus", start: start, store: store, remote: remote, tap: tap}, target
}

type diffSample struct {
	t int64 // milliseconds
	v string
}

type diffSeries struct {
	labels  map[string]string
	samples []diffSample
}

func (s diffSeries) key() string {
	names := make([]string, 0, len(s.labels))
	for n := range s.labels {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "%s=%q,", n, s.labels[n])
	}
	return b.String()
}

// selector is the exact selector of a series: every label with =.
func (s diffSeries) selector() string {
	parts := make([]string, 0, len(s.labels))
	for n, v := range s.labels {
		parts = append(parts, n+"="+strconv.Quote(v))
	}
	sort.Strings(parts)
	return "{" + strings.Join(parts, ",") + "}"
}

// promGet calls a Prometheus-compatible API and decodes data.
func promGet(ctx context.Context, base, path string, form neturl.Values, data any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path+"?"+form.Encode(), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var env struct {
		Status string          `json:"status"`
		Data   json.RawMessage `json:"data"`
		Error  string          `json:"error"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return fmt.Errorf("%s %s: %s: %.300s", base, path, resp.Status, body)
	}
	if env.Status != "success" {
		return fmt.Errorf("%s %s: %s: %s", base, path, resp.Status, env.Error)
	}
	return json.Unmarshal(env.Data, data)
}

// rawSamples answers selector[window] at ts: the stored samples.
func rawSamples(ctx context.Context, base, selector string, window time.Duration, ts time.Time) ([]diffSeries, error) {
	var data struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			Metric map[string]string `json:"metric"`
			Values [][2]any          `json:"values"`
		} `json:"result"`
	}
	form := neturl.Values{
		"query": {fmt.Sprintf("%s[%dms]", selector, window.Milliseconds())},
		"time":  {strconv.FormatFloat(float64(ts.UnixMilli())/1e3, 'f', 3, 64)},
	}
	if err := promGet(ctx, base, "/api/v1/query", form, &data); err != nil {
		return nil, err
	}
	if data.ResultType != "matrix" {
		return nil, fmt.Errorf("%s: result type %q", selector, data.ResultType)
	}
	out := make([]diffSeries, 0, len(data.Result))
	for _, r := range data.Result {
		s := diffSeries{labels: r.Metric}
		for _, p := range r.Values {
			ts, _ := p[0].(float64)
			v, _ := p[1].(string)
			s.samples = append(s.samples, diffSample{t: int64(math.Round(ts * 1000)), v: v})
		}
		out = append(out, s)
	}
	return out, nil
}

func seriesList(ctx context.Context, base, match string, start, end time.Time) ([]diffSeries, error) {
	var data []map[string]string
	form := neturl.Values{"match[]": {match}, "start": {strconv.FormatInt(start.Unix(), 10)}, "end": {strconv.FormatInt(end.Unix()+1, 10)}}
	if err := promGet(ctx, base, "/api/v1/series", form, &data); err != nil {
		return nil, err
	}
	out := make([]diffSeries, len(data))
	for i, ls := range data {
		out[i] = diffSeries{labels: ls}
	}
	return out, nil
}

// sameValue compares two API sample values numerically (bit for bit,
// NaN equal to NaN), not as text.
//
// With rel > 0 values may differ by that relative amount: VictoriaMetrics
// keeps values as decimals of 12 significant digits and answers some of
// them one float64 ulp away from what it was sent.
func sameValue(a, b string, rel float64) bool {
	fa, errA := strconv.ParseFloat(a, 64)
	fb, errB := strconv.ParseFloat(b, 64)
	if errA != nil || errB != nil {
		return a == b
	}
	if math.Float64bits(fa) == math.Float64bits(fb) || (math.IsNaN(fa) && math.IsNaN(fb)) {
		return true
	}
	return rel > 0 && math.Abs(fa-fb) <= rel*math.Max(math.Abs(fa), math.Abs(fb))
}

// vmPrecision is the relative difference allowed between what was written
// into VictoriaMetrics and what it answers (12 significant decimal digits).
const vmPrecision = 1e-12

// writeTap is a remote-write receiver in front of the store that records
// every sample our forwarder sends (staleness markers bit for bit) and
// passes the request on.
type writeTap struct {
	url     string
	mu      sync.Mutex
	samples map[string][]prompb.Sample
}

func newWriteTap(t *testing.T, next string) *writeTap {
	tap := &writeTap{samples: map[string][]prompb.Sample{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		raw, err := snappy.Decode(nil, body)
		var req prompb.WriteRequest
		if err == nil {
			err = req.Unmarshal(raw)
		}
		if err != nil {
			http.Error(w, "tap: "+err.Error(), http.StatusBadRequest)
			return
		}
		out, err := http.NewRequestWithContext(r.Context(), http.MethodPost, next, bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		out.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		msg, _ := io.ReadAll(resp.Body)
		if resp.StatusCode/100 == 2 {
			tap.mu.Lock()
			for _, ts := range req.Timeseries {
				ls := map[string]string{}
				for _, l := range ts.Labels {
					ls[l.Name] = l.Value
				}
				k := diffSeries{labels: ls}.key()
				tap.samples[k] = append(tap.samples[k], ts.Samples...)
			}
			tap.mu.Unlock()
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(msg)
	}))
	t.Cleanup(srv.Close)
	tap.url = srv.URL + "/api/v1/write"
	return tap
}

// sent returns what was forwarded for a series in [mint, maxt], sorted,
// split into samples and staleness markers.
func (tap *writeTap) sent(key string, mint, maxt int64) (samples []diffSample, markers []int64) {
	tap.mu.Lock()
	all := slices.Clone(tap.samples[key])
	tap.mu.Unlock()
	slices.SortStableFunc(all, func(a, b prompb.Sample) int { return cmpInt(a.Timestamp, b.Timestamp) })
	for _, smp := range all {
		switch {
		case smp.Timestamp < mint || smp.Timestamp > maxt:
		case value.IsStaleNaN(smp.Value):
			markers = append(markers, smp.Timestamp)
		default:
			samples = append(samples, diffSample{t: smp.Timestamp, v: strconv.FormatFloat(smp.Value, 'f', -1, 64)})
		}
	}
	return samples, markers
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

type diffReport struct {
	series, samples, markers, mismatches int
	examples                             []string
}

// compareAll lists the job's series on both sides, then compares each
// series' raw samples in (ts-window, ts] one by one, with w queries in
// flight.
func compareAll(ctx context.Context, e diffEnv, ts time.Time, workers, rounds int) (diffReport, error) {
	window := ts.Sub(e.start) + 10*time.Second
	match := `{job="diff"}`
	ref, err := seriesList(ctx, e.promURL, match, e.start.Add(-10*time.Second), ts)
	if err != nil {
		return diffReport{}, err
	}
	ours, err := seriesList(ctx, e.oursURL, match, e.start.Add(-10*time.Second), ts)
	if err != nil {
		return diffReport{}, err
	}
	var rep diffReport
	var mu sync.Mutex
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		rep.mismatches++
		if len(rep.examples) < 10 {
			rep.examples = append(rep.examples, fmt.Sprintf(format, args...))
		}
	}
	oursKeys := map[string]bool{}
	for _, s := range ours {
		oursKeys[s.key()] = true
	}
	refKeys := map[string]bool{}
	for _, s := range ref {
		refKeys[s.key()] = true
		if !oursKeys[s.key()] {
			fail("series %s is missing from our store", s.key())
		}
	}
	for _, s := range ours {
		if !refKeys[s.key()] {
			fail("series %s is in our store but not in Prometheus", s.key())
		}
	}
	rep.series = len(ref)

	oursNaN := map[string][]int64{}
	// compareSeries compares one series' samples as both sides answered them.
	rel := 0.0
	if e.remote {
		rel = vmPrecision
	}
	compareSeries := func(sel string, a, b diffSeries, record bool, rel float64) {
		pa, pb := a.samples, b.samples
		if e.remote {
			// VictoriaMetrics answers Prometheus' staleness markers as NaN
			// samples where Prometheus' API hides them; they are checked
			// against Prometheus' markers below.
			var nan []int64
			pb = slices.DeleteFunc(slices.Clone(pb), func(p diffSample) bool {
				if p.v == "NaN" {
					nan = append(nan, p.t)
					return true
				}
				return false
			})
			if record {
				mu.Lock()
				oursNaN[a.key()] = nan
				mu.Unlock()
			}
		}
		for i := range max(len(pa), len(pb)) {
			switch {
			case i >= len(pb):
				fail("%s: sample @%d=%s missing from our store", sel, pa[i].t, pa[i].v)
			case i >= len(pa):
				fail("%s: extra sample @%d=%s in our store", sel, pb[i].t, pb[i].v)
			case pa[i].t != pb[i].t || !sameValue(pa[i].v, pb[i].v, rel):
				fail("%s: sample %d: Prometheus @%d=%s, ours @%d=%s", sel, i, pa[i].t, pa[i].v, pb[i].t, pb[i].v)
			}
		}
	}
	// Jobs: every series on its own (the one-by-one comparison), and every
	// metric name as a whole, so large answers are encoded concurrently
	// with small ones.
	type job struct {
		sel    string
		single bool
	}
	jobs := make(chan job)
	var wg sync.WaitGroup
	var samples atomic.Int64
	var firstErr error
	for range workers {
		wg.Go(func() {
			for j := range jobs {
				a, errA := rawSamples(ctx, e.promURL, j.sel, window, ts)
				b, errB := rawSamples(ctx, e.oursURL, j.sel, window, ts)
				if err := cmpErr(errA, errB); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					continue
				}
				if j.single && (len(a) != 1 || len(b) != 1) {
					fail("%s: Prometheus has %d series, we have %d", j.sel, len(a), len(b))
					continue
				}
				byKey := map[string]diffSeries{}
				for _, s := range b {
					byKey[s.key()] = s
				}
				if len(a) != len(b) {
					fail("%s: Prometheus answered %d series, we %d", j.sel, len(a), len(b))
				}
				for _, sa := range a {
					sb, ok := byKey[sa.key()]
					if !ok {
						fail("%s: series %s missing from our answer", j.sel, sa.key())
						continue
					}
					if j.single {
						samples.Add(int64(len(sa.samples)))
					}
					compareSeries(j.sel, sa, sb, j.single, rel)
					if e.remote && j.single {
						// What our forwarder wrote is exactly what
						// Prometheus holds, bit for bit.
						sent, _ := e.tap.sent(sa.key(), ts.Add(-window).UnixMilli()+1, ts.UnixMilli())
						compareSeries(j.sel+" (forwarded)", sa, diffSeries{labels: sa.labels, samples: sent}, false, 0)
					}
				}
			}
		})
	}
	names := map[string]bool{}
	for _, s := range ref {
		names[s.labels["__name__"]] = true
	}
	for i, s := range ref {
		jobs <- job{sel: s.selector(), single: true}
		if i%max(1, len(ref)/rounds) == 0 {
			for n := range names {
				jobs <- job{sel: n + `{job="diff"}`}
			}
		}
	}
	close(jobs)
	wg.Wait()
	rep.samples = int(samples.Load())
	if firstErr != nil {
		return rep, firstErr
	}

	// Staleness markers (series that went away, and all of them when the
	// target went down) are samples too, which the query API hides:
	// Prometheus' remote read shows its raw markers; ours are read from the
	// embedded TSDB, or are VictoriaMetrics' NaN samples.
	mint, maxt := ts.Add(-window).UnixMilli()+1, ts.UnixMilli()
	refMarkers, err := remoteReadMarkers(ctx, e.promURL, mint, maxt)
	if err != nil {
		return rep, err
	}
	oursMarkers := oursNaN
	if !e.remote {
		if oursMarkers, err = tsdbMarkers(ctx, e.store, mint, maxt); err != nil {
			return rep, err
		}
	}
	for k, want := range refMarkers {
		rep.markers += len(want)
		if got := oursMarkers[k]; !slices.Equal(want, got) {
			fail("%s: staleness markers differ: Prometheus at %v, ours at %v", k, want, got)
		}
	}
	for k, got := range oursMarkers {
		if _, ok := refMarkers[k]; !ok && len(got) > 0 {
			fail("%s: staleness markers at %v that Prometheus does not have", k, got)
		}
	}
	if e.remote {
		for _, s := range ref {
			k := s.key()
			if _, sent := e.tap.sent(k, mint, maxt); !slices.Equal(refMarkers[k], sent) {
				fail("%s: staleness markers differ: Prometheus at %v, our forwarder sent %v", k, refMarkers[k], sent)
			}
		}
	}
	return rep, nil
}

// remoteReadMarkers reads the job's raw samples from Prometheus' remote-read
// endpoint and returns the timestamps of staleness markers per series.
func remoteReadMarkers(ctx context.Context, promURL string, mint, maxt int64) (map[string][]int64, error) {
	raw, err := (&prompb.ReadRequest{Queries: []*prompb.Query{{
		StartTimestampMs: mint, EndTimestampMs: maxt,
		Matchers: []*prompb.LabelMatcher{{Type: prompb.LabelMatcher_EQ, Name: "job", Value: "diff"}},
	}}}).Marshal()
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, promURL+"/api/v1/read", bytes.NewReader(snappy.Encode(nil, raw)))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Encoding", "snappy")
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("X-Prometheus-Remote-Read-Version", "0.1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("remote read: %s: %.300s", resp.Status, body)
	}
	dec, err := snappy.Decode(nil, body)
	if err != nil {
		return nil, err
	}
	var rr prompb.ReadResponse
	if err := rr.Unmarshal(dec); err != nil {
		return nil, err
	}
	out := map[string][]int64{}
	for _, res := range rr.Results {
		for _, ts := range res.Timeseries {
			ls := map[string]string{}
			for _, l := range ts.Labels {
				ls[l.Name] = l.Value
			}
			var marks []int64
			for _, smp := range ts.Samples {
				if value.IsStaleNaN(smp.Value) {
					marks = append(marks, smp.Timestamp)
				}
			}
			if len(marks) > 0 {
				out[diffSeries{labels: ls}.key()] = marks
			}
		}
	}
	return out, nil
}

// tsdbMarkers returns the staleness markers per series in our embedded TSDB.
func tsdbMarkers(ctx context.Context, s *metricstore.Store, mint, maxt int64) (map[string][]int64, error) {
	q, err := s.DB().Querier(mint, maxt)
	if err != nil {
		return nil, err
	}
	defer q.Close()
	ss := q.Select(ctx, false, nil, labels.MustNewMatcher(labels.MatchEqual, "job", "diff"))
	out := map[string][]int64{}
	var it chunkenc.Iterator
	for ss.Next() {
		ls := ss.At().Labels().Map()
		it = ss.At().Iterator(it)
		var marks []int64
		for it.Next() == chunkenc.ValFloat {
			if t, v := it.At(); value.IsStaleNaN(v) {
				marks = append(marks, t)
			}
		}
		if err := it.Err(); err != nil {
			return nil, err
		}
		if len(marks) > 0 {
			out[diffSeries{labels: ls}.key()] = marks
		}
	}
	return out, ss.Err()
}

func cmpErr(a, b error) error {
	if a != nil {
		return fmt.Errorf("reference Prometheus: %w", a)
	}
	if b != nil {
		return fmt.Errorf("our API: %w", b)
	}
	return nil
}

// totalSamples is the sum over the job's metric names of
// sum(count_over_time(name{job="diff"}[window])) at ts (one query per name:
// count_over_time drops the name, so one query over all names would hold
// duplicate label sets).
func totalSamples(ctx context.Context, base string, names []string, window time.Duration, ts time.Time) (float64, error) {
	total := 0.0
	for _, name := range names {
		var data struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		}
		form := neturl.Values{
			"query": {fmt.Sprintf(`sum(count_over_time(%s{job="diff"}[%dms]))`, name, window.Milliseconds())},
			"time":  {strconv.FormatFloat(float64(ts.UnixMilli())/1e3, 'f', 3, 64)},
		}
		if err := promGet(ctx, base, "/api/v1/query", form, &data); err != nil {
			return 0, err
		}
		if len(data.Result) == 0 {
			continue
		}
		s, _ := data.Result[0].Value[1].(string)
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0, err
		}
		total += v
	}
	return total, nil
}

// runDifferential drives one run and asserts zero mismatches.
func runDifferential(t *testing.T, s diffScale, remote bool) {
	began := time.Now()
	e, target := startDifferential(t, s, remote)
	ts := time.Now().Add(-s.interval / 2)
	window := ts.Sub(e.start) + 10*time.Second
	ctx := t.Context()

	// Remote write is asynchronous: wait until our side holds as many
	// samples as Prometheus (bounded), then compare one by one.
	var names []string
	require.NoError(t, promGet(ctx, e.promURL, "/api/v1/label/__name__/values", neturl.Values{"match[]": {`{job="diff"}`}}, &names))
	require.Contains(t, names, "diff_gauge")
	var want, got float64
	converge := time.Now().Add(time.Minute + time.Duration(s.scrapes)*s.interval/2)
	for {
		var err error
		want, err = totalSamples(ctx, e.promURL, names, window, ts)
		require.NoError(t, err)
		got, err = totalSamples(ctx, e.oursURL, names, window, ts)
		require.NoError(t, err)
		if (want > 0 && got == want) || time.Now().After(converge) {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	caughtUp := time.Since(began)
	target.mu.Lock()
	scrapes := target.n
	target.mu.Unlock()
	rep, err := compareAll(ctx, e, ts, s.workers, s.nameRounds)
	require.NoError(t, err)
	mode := "embedded"
	if remote {
		mode = "remote (VictoriaMetrics)"
	}
	t.Logf("differential %s: %d scrapes of %d series, %d series, %d samples and %d staleness markers compared (Prometheus counted %.0f samples, we %.0f), %d mismatches; caught up after %s, total %s",
		mode, scrapes, s.gauges+s.counters+s.histograms*(len(diffBuckets)+2)+s.ephemeral, rep.series, rep.samples, rep.markers, want, got, rep.mismatches,
		caughtUp.Round(time.Millisecond), time.Since(began).Round(time.Millisecond))
	require.NotZero(t, rep.samples, "nothing was compared")
	require.Greater(t, rep.series, s.gauges+s.counters, "too few series compared")
	require.NotZero(t, rep.markers, "no staleness markers were compared")
	require.Zero(t, rep.mismatches, "first mismatches:\n%s", strings.Join(rep.examples, "\n"))
	require.Equal(t, want, got, "sample totals differ")
	require.Equal(t, int(want), rep.samples, "compared a different number of samples than Prometheus holds")
	// Each scrape Prometheus completed (up == 1; on a loaded machine some
	// time out) stored every gauge and counter, all of them compared.
	var up struct {
		Result []struct {
			Value [2]any `json:"value"`
		} `json:"result"`
	}
	require.NoError(t, promGet(ctx, e.promURL, "/api/v1/query", neturl.Values{
		"query": {fmt.Sprintf(`sum_over_time(up{job="diff"}[%dms])`, window.Milliseconds())},
		"time":  {strconv.FormatFloat(float64(ts.UnixMilli())/1e3, 'f', 3, 64)},
	}, &up))
	require.Len(t, up.Result, 1)
	okScrapes, err := strconv.ParseFloat(up.Result[0].Value[1].(string), 64)
	require.NoError(t, err)
	t.Logf("Prometheus completed %.0f of the %d scrapes the target answered", okScrapes, scrapes)
	require.NotZero(t, okScrapes)
	require.GreaterOrEqual(t, rep.samples, int(okScrapes)*(s.gauges+s.counters), "fewer samples compared than scraped")
}

// TestDifferentialPrometheusVsEmbedded: every sample Prometheus scraped and
// stored is, after remote write, the same sample in our embedded store.
func TestDifferentialPrometheusVsEmbedded(t *testing.T) {
	t.Parallel()
	runDifferential(t, defaultDiffScale.withSoak(), false)
}

// TestDifferentialPrometheusVsRemoteMode: the same through our remote mode:
// what our forwarder writes into VictoriaMetrics is what it answers.
func TestDifferentialPrometheusVsRemoteMode(t *testing.T) {
	t.Parallel()
	runDifferential(t, defaultDiffScale.withSoak(), true)
}
