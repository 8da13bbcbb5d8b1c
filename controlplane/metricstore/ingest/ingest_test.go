package ingest_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang/snappy"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/prompb"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"

	"github.com/heteroflow/heteroflow/controlplane/metricstore/ingest"
)

func openDB(t *testing.T) *tsdb.DB {
	t.Helper()
	db, err := tsdb.Open(t.TempDir(), nil, nil, tsdb.DefaultOptions(), nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func rwBody(t testing.TB, ts ...prompb.TimeSeries) []byte {
	raw, err := (&prompb.WriteRequest{Timeseries: ts}).Marshal()
	require.NoError(t, err)
	return snappy.Encode(nil, raw)
}

func series(name string, t int64, v float64) prompb.TimeSeries {
	return prompb.TimeSeries{
		Labels:  []prompb.Label{{Name: "__name__", Value: name}, {Name: "node", Value: "n1"}},
		Samples: []prompb.Sample{{Timestamp: t, Value: v}},
	}
}

func post(h http.Handler, path, ctype string, body []byte, hdr ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	r.Header.Set("Content-Type", ctype)
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// count returns how many samples of name the TSDB holds.
func count(t *testing.T, db *tsdb.DB, name string) int {
	t.Helper()
	q, err := db.Querier(0, time.Now().Add(time.Hour).UnixMilli())
	require.NoError(t, err)
	defer q.Close()
	ss := q.Select(context.Background(), false, nil, labels.MustNewMatcher(labels.MatchEqual, "__name__", name))
	n := 0
	for ss.Next() {
		it := ss.At().Iterator(nil)
		for it.Next() != 0 {
			n++
		}
	}
	require.NoError(t, ss.Err())
	return n
}

func errorCode(t *testing.T, w *httptest.ResponseRecorder) string {
	t.Helper()
	var body struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &body), w.Body.String())
	require.NotEmpty(t, body.Error.Message)
	return body.Error.Code
}

func TestRemoteWrite(t *testing.T) {
	t.Parallel()
	now := time.Now().UnixMilli()
	cases := []struct {
		name    string
		body    []byte
		ctype   string
		status  int
		code    string
		samples int // of metric "up" stored afterwards
	}{
		{"valid", rwBody(t, series("up", now, 1)), "application/x-protobuf", http.StatusNoContent, "", 1},
		{"not snappy", []byte("garbage"), "application/x-protobuf", http.StatusBadRequest, "invalid_argument", 0},
		{"snappy but not protobuf", snappy.Encode(nil, []byte("\xff\xff\xff")), "application/x-protobuf", http.StatusBadRequest, "invalid_argument", 0},
		{"unknown proto message", rwBody(t, series("up", now, 1)), "application/x-protobuf;proto=foo.Bar", http.StatusUnsupportedMediaType, "unsupported_media_type", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			db := openDB(t)
			h, err := ingest.New(db, ingest.Options{})
			require.NoError(t, err)
			w := post(h.RemoteWrite(), "/api/v1/write", tc.ctype, tc.body, "Content-Encoding", "snappy")
			require.Equal(t, tc.status, w.Code, w.Body.String())
			if tc.code != "" {
				require.Equal(t, tc.code, errorCode(t, w))
			}
			require.Equal(t, tc.samples, count(t, db, "up"))
		})
	}
}

func TestRemoteWriteOutOfOrderIsAtomic400(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	h, err := ingest.New(db, ingest.Options{})
	require.NoError(t, err)
	now := time.Now().UnixMilli()
	require.Equal(t, http.StatusNoContent, post(h.RemoteWrite(), "/", "application/x-protobuf", rwBody(t, series("up", now, 1))).Code)
	// Duplicate timestamp with a new value, plus a valid new series in the
	// same request: Prometheus rejects the request and keeps none of it.
	w := post(h.RemoteWrite(), "/", "application/x-protobuf", rwBody(t, series("other", now, 1), series("up", now, 2)))
	require.Equal(t, http.StatusBadRequest, w.Code)
	require.Equal(t, "invalid_argument", errorCode(t, w))
	require.Contains(t, w.Body.String(), "duplicate sample")
	require.Equal(t, 0, count(t, db, "other"), "a rejected request must not be partially stored")
	// An exact duplicate (same value) is accepted as Prometheus does.
	require.Equal(t, http.StatusNoContent, post(h.RemoteWrite(), "/", "application/x-protobuf", rwBody(t, series("up", now, 1))).Code)
	require.Equal(t, 1, count(t, db, "up"))
}

func TestOversizeIs413(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	h, err := ingest.New(db, ingest.Options{Limits: ingest.Limits{MaxBodyBytes: 64, MaxInflightBytes: 1 << 20}})
	require.NoError(t, err)
	big := rwBody(t, series(strings.Repeat("x", 200), time.Now().UnixMilli(), 1))
	w := post(h.RemoteWrite(), "/", "application/x-protobuf", big)
	require.Equal(t, http.StatusRequestEntityTooLarge, w.Code)
	require.Equal(t, "payload_too_large", errorCode(t, w))

	// Without Content-Length (chunked) the limit holds while reading.
	r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(big))
	r.ContentLength = -1
	r.Header.Set("Content-Type", "application/x-protobuf")
	w = httptest.NewRecorder()
	h.OTLP().ServeHTTP(w, r)
	require.Equal(t, http.StatusRequestEntityTooLarge, w.Code)
}

// blocking holds every commit until release is closed.
type blocking struct {
	storage.AppendableV2
	entered chan struct{}
	release chan struct{}
}

func (b *blocking) AppenderV2(ctx context.Context) storage.AppenderV2 {
	return &blockingApp{AppenderV2: b.AppendableV2.AppenderV2(ctx), b: b}
}

type blockingApp struct {
	storage.AppenderV2
	b *blocking
}

func (a *blockingApp) Commit() error {
	a.b.entered <- struct{}{}
	<-a.b.release
	return a.AppenderV2.Commit()
}

func TestOverloadIs429WithRetryAfter(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	b := &blocking{AppendableV2: db, entered: make(chan struct{}, 1), release: make(chan struct{})}
	h, err := ingest.New(b, ingest.Options{Limits: ingest.Limits{MaxInflightRequests: 1, RetryAfter: 3 * time.Second}})
	require.NoError(t, err)
	body := rwBody(t, series("up", time.Now().UnixMilli(), 1))
	first := make(chan int)
	go func() { first <- post(h.RemoteWrite(), "/", "application/x-protobuf", body).Code }()
	<-b.entered // the first push holds the only slot

	w := post(h.RemoteWrite(), "/", "application/x-protobuf", body)
	require.Equal(t, http.StatusTooManyRequests, w.Code)
	require.Equal(t, "3", w.Header().Get("Retry-After"))
	require.Equal(t, "too_many_requests", errorCode(t, w))

	close(b.release)
	require.Equal(t, http.StatusNoContent, <-first)
}

func TestByteBudgetIs429(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	b := &blocking{AppendableV2: db, entered: make(chan struct{}, 1), release: make(chan struct{})}
	body := rwBody(t, series("up", time.Now().UnixMilli(), 1))
	limit := int64(len(body))
	h, err := ingest.New(b, ingest.Options{Limits: ingest.Limits{MaxBodyBytes: limit, MaxInflightBytes: limit}})
	require.NoError(t, err)
	first := make(chan int)
	go func() { first <- post(h.RemoteWrite(), "/", "application/x-protobuf", body).Code }()
	<-b.entered
	w := post(h.RemoteWrite(), "/", "application/x-protobuf", body)
	require.Equal(t, http.StatusTooManyRequests, w.Code)
	require.NotEmpty(t, w.Header().Get("Retry-After"))
	close(b.release)
	require.Equal(t, http.StatusNoContent, <-first)
}

func otlpMetrics(now time.Time) pmetric.Metrics {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr("service.name", "heteroflow-agent")
	rm.Resource().Attributes().PutStr("host.name", "gpu-node-1")
	m := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	m.SetName("hw.gpu.utilization")
	m.SetUnit("1")
	m.SetDescription("GPU utilisation ratio")
	dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
	dp.SetTimestamp(pcommonTime(now))
	dp.SetDoubleValue(0.75)
	dp.Attributes().PutStr("hw.id", "GPU-0")
	return md
}

func TestOTLP(t *testing.T) {
	t.Parallel()
	now := time.Now()
	req := pmetricotlp.NewExportRequestFromMetrics(otlpMetrics(now))
	pb, err := req.MarshalProto()
	require.NoError(t, err)
	js, err := req.MarshalJSON()
	require.NoError(t, err)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, err = zw.Write(pb)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	cases := []struct {
		name   string
		ctype  string
		body   []byte
		status int
		hdr    []string
	}{
		{"protobuf", "application/x-protobuf", pb, http.StatusOK, nil},
		// The collector's otlphttp exporter gzips by default.
		{"protobuf gzip", "application/x-protobuf", gz.Bytes(), http.StatusOK, []string{"Content-Encoding", "gzip"}},
		{"unknown encoding", "application/x-protobuf", pb, http.StatusBadRequest, []string{"Content-Encoding", "br"}},
		{"json", "application/json", js, http.StatusOK, nil},
		{"broken json", "application/json", []byte(`{"resourceMetrics":[`), http.StatusBadRequest, nil},
		{"unknown content type", "text/plain", pb, http.StatusBadRequest, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			db := openDB(t)
			h, err := ingest.New(db, ingest.Options{})
			require.NoError(t, err)
			w := post(h.OTLP(), "/api/v1/otlp/v1/metrics", tc.ctype, tc.body, tc.hdr...)
			require.Equal(t, tc.status, w.Code, w.Body.String())
			if tc.status != http.StatusOK {
				require.Equal(t, "invalid_argument", errorCode(t, w))
				return
			}
			// Prometheus' translation: unit "1" on a gauge becomes _ratio;
			// host.name is promoted to a label.
			q, err := db.Querier(0, now.Add(time.Hour).UnixMilli())
			require.NoError(t, err)
			defer q.Close()
			ss := q.Select(t.Context(), false, nil, labels.MustNewMatcher(labels.MatchEqual, "__name__", "hw_gpu_utilization_ratio"))
			require.True(t, ss.Next(), "translated series missing")
			ls := ss.At().Labels()
			require.Equal(t, "gpu-node-1", ls.Get("host_name"))
			require.Equal(t, "GPU-0", ls.Get("hw_id"))
			require.Equal(t, "heteroflow-agent", ls.Get("job"))
			require.Contains(t, h.Metadata().List("hw_gpu_utilization_ratio", 0), "hw_gpu_utilization_ratio")
		})
	}
}
