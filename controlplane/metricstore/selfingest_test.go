package metricstore

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/tsdb"
	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane/metricstore/ingest"
)

// TestSelfIngestMatchesScrapeShape checks that one gather becomes exactly
// the series a Prometheus scrape of /metrics would create.
func TestSelfIngestMatchesScrapeShape(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "reqs_total", Help: "r"}, []string{"code"})
	c.WithLabelValues("200").Add(3)
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "lat_seconds", Help: "l", Buckets: []float64{0.1, 1}})
	h.Observe(0.5)
	s := prometheus.NewSummary(prometheus.SummaryOpts{Name: "sz_bytes", Help: "s", Objectives: map[float64]float64{0.5: 0.05}})
	s.Observe(7)
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "temp", Help: "t"})
	g.Set(-1.5)
	reg.MustRegister(c, h, s, g)

	db, err := tsdb.Open(t.TempDir(), nil, nil, tsdb.DefaultOptions(), nil)
	require.NoError(t, err)
	defer db.Close()
	meta := ingest.NewMetadataStore()
	si := &selfIngester{gatherer: reg, backend: db, meta: meta, job: "hf", instance: "i1"}
	now := time.Now()
	n, err := si.ingest(context.Background(), now)
	require.NoError(t, err)
	// counter 1 + histogram (2 buckets + +Inf + sum + count) 5 + summary (1 quantile + sum + count) 3 + gauge 1
	require.Equal(t, 10, n)

	q, err := db.Querier(0, now.Add(time.Minute).UnixMilli())
	require.NoError(t, err)
	defer q.Close()
	got := map[string]float64{}
	ss := q.Select(context.Background(), true, nil, labels.MustNewMatcher(labels.MatchEqual, "job", "hf"))
	for ss.Next() {
		lb := ss.At().Labels()
		require.Equal(t, "i1", lb.Get("instance"))
		it := ss.At().Iterator(nil)
		require.NotZero(t, it.Next())
		_, v := it.At()
		got[lb.DropMetricName().Get("le")+lb.Get("quantile")+lb.Get("code")+"|"+lb.Get("__name__")] = v
	}
	require.NoError(t, ss.Err())
	require.Equal(t, map[string]float64{
		"200|reqs_total":          3,
		"0.1|lat_seconds_bucket":  0,
		"1|lat_seconds_bucket":    1,
		"+Inf|lat_seconds_bucket": 1,
		"|lat_seconds_sum":        0.5,
		"|lat_seconds_count":      1,
		"0.5|sz_bytes":            7,
		"|sz_bytes_sum":           7,
		"|sz_bytes_count":         1,
		"|temp":                   -1.5,
	}, got)
	require.Equal(t, "counter", string(meta.List("reqs_total", 0)["reqs_total"][0].Type))
}
