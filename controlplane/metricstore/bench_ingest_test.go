package metricstore_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/golang/snappy"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/prompb"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
)

// The ingest workload: 1,000 nodes × 8 devices, pushed in requests of
// benchBatch samples (one sample per series, the shape of a collector
// batch); request i carries block i%blocks at time base+(i/blocks) s, so
// every series only moves forward in time.
const (
	benchNodes   = 1000
	benchDevices = 8
	benchBatch   = 2000
	benchBlocks  = benchNodes * benchDevices / benchBatch
)

func rwPayload(i int, base time.Time) []byte {
	ts := base.Add(time.Duration(i/benchBlocks) * time.Second).UnixMilli()
	first := (i % benchBlocks) * benchBatch
	req := prompb.WriteRequest{Timeseries: make([]prompb.TimeSeries, 0, benchBatch)}
	for s := first; s < first+benchBatch; s++ {
		req.Timeseries = append(req.Timeseries, prompb.TimeSeries{
			Labels: []prompb.Label{
				{Name: "__name__", Value: "hw_gpu_utilization"},
				{Name: "device", Value: fmt.Sprint(s % benchDevices)},
				{Name: "model", Value: "H100"},
				{Name: "node", Value: fmt.Sprintf("node-%04d", s/benchDevices)},
				{Name: "vendor", Value: "nvidia"},
			},
			Samples: []prompb.Sample{{Timestamp: ts, Value: float64(s % 100)}},
		})
	}
	raw, err := req.Marshal()
	if err != nil {
		panic(err)
	}
	return snappy.Encode(nil, raw)
}

func otlpPayload(i int, base time.Time) []byte {
	ts := pcommon.NewTimestampFromTime(base.Add(time.Duration(i/benchBlocks) * time.Second))
	firstNode := (i % benchBlocks) * benchBatch / benchDevices
	md := pmetric.NewMetrics()
	for n := firstNode; n < firstNode+benchBatch/benchDevices; n++ {
		rm := md.ResourceMetrics().AppendEmpty()
		rm.Resource().Attributes().PutStr("service.name", "heteroflow-agent")
		rm.Resource().Attributes().PutStr("service.instance.id", fmt.Sprintf("node-%04d", n))
		rm.Resource().Attributes().PutStr("host.name", fmt.Sprintf("node-%04d", n))
		m := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
		m.SetName("hw.gpu.utilization")
		m.SetUnit("1")
		g := m.SetEmptyGauge()
		for d := 0; d < benchDevices; d++ {
			dp := g.DataPoints().AppendEmpty()
			dp.SetTimestamp(ts)
			dp.SetDoubleValue(float64(d) / 10)
			dp.Attributes().PutStr("hw.id", fmt.Sprint(d))
			dp.Attributes().PutStr("hw.vendor", "nvidia")
		}
	}
	raw, err := pmetricotlp.NewExportRequestFromMetrics(md).MarshalProto()
	if err != nil {
		panic(err)
	}
	return raw
}

// pusher sends one target its workload; its position survives reruns
// (-count) so every series keeps moving forward in time.
type pusher struct {
	url, ctype string
	snappy     bool
	payload    func(int, time.Time) []byte
	base       time.Time
	next       int
}

func newPusher(url string, rw bool) *pusher {
	p := &pusher{url: url, snappy: rw, base: time.Now().Add(-5 * time.Minute), ctype: "application/x-protobuf", payload: otlpPayload}
	if rw {
		p.payload = rwPayload
	}
	return p
}

// push sends the next request and returns how long the round trip took
// (payload encoding is the sender's cost and is not included).
func (p *pusher) push(b *testing.B, client *http.Client) time.Duration {
	body := p.payload(p.next, p.base)
	start := time.Now()
	req, err := http.NewRequest(http.MethodPost, p.url, bytes.NewReader(body))
	require.NoError(b, err)
	req.Header.Set("Content-Type", p.ctype)
	if p.snappy {
		req.Header.Set("Content-Encoding", "snappy")
		req.Header.Set("X-Prometheus-Remote-Write-Version", "0.1.0")
	}
	resp, err := client.Do(req)
	require.NoError(b, err)
	msg, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b.Fatalf("push %d to %s: %s: %s", p.next, p.url, resp.Status, msg)
	}
	p.next++
	return time.Since(start)
}

// warm creates every series once, so the timed pushes measure the steady
// state (appending to existing series), the same for every target.
func (p *pusher) warm(b *testing.B, client *http.Client) {
	for p.next < benchBlocks {
		p.push(b, client)
	}
}

func samplesPerSec(pushes int, busy time.Duration) float64 {
	return float64(pushes*benchBatch) / busy.Seconds()
}

// BenchmarkIngest measures our receivers against Debian's Prometheus on the
// same machine, interleaved push by push so load from anything else on the
// machine hits both sides equally.
func BenchmarkIngest(b *testing.B) {
	reg := prometheus.NewRegistry()
	s := openEmbedded(b, reg)
	srv := serve(b, s)
	promAddr := startPrometheus(b, "global: {}\n")
	client := &http.Client{}
	// Pushers live across -count reruns so timestamps keep moving forward.
	ours := newPusher(srv.URL+"/api/v1/write", true)
	theirs := newPusher(url(promAddr, "/api/v1/write"), true)
	oursOTLP := newPusher(srv.URL+"/api/v1/otlp/v1/metrics", false)

	b.Run("remote_write/side_by_side", func(b *testing.B) {
		ours.warm(b, client)
		theirs.warm(b, client)
		var oursBusy, theirsBusy time.Duration
		n := 0
		for b.Loop() {
			oursBusy += ours.push(b, client)
			theirsBusy += theirs.push(b, client)
			n++
		}
		hf, prom := samplesPerSec(n, oursBusy), samplesPerSec(n, theirsBusy)
		b.ReportMetric(hf, "heteroflow_samples/s")
		b.ReportMetric(prom, "prometheus_samples/s")
		b.ReportMetric(hf/prom, "ratio")
	})
	// Debian's Prometheus is 2.42, which has no OTLP receiver (added in
	// 2.47), so OTLP is measured on our side only, against our own
	// remote-write figure above.
	b.Run("otlp/heteroflow", func(b *testing.B) {
		oursOTLP.warm(b, client)
		var busy time.Duration
		n := 0
		for b.Loop() {
			busy += oursOTLP.push(b, client)
			n++
		}
		b.ReportMetric(samplesPerSec(n, busy), "heteroflow_samples/s")
	})
}
