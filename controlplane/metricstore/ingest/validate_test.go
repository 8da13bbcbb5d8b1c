package ingest_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/prompb"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"

	"github.com/heteroflow/heteroflow/controlplane/metricstore/ingest"
)

func withLabels(name string, t int64, extra ...prompb.Label) prompb.TimeSeries {
	ts := series(name, t, 1)
	ts.Labels = append(ts.Labels, extra...)
	return ts
}

// TestRemoteWriteRefusesBadSeries: invalid or duplicate label names, NUL
// bytes, too many labels and oversize values are refused with 400, the
// whole push is dropped, and nothing is logged at ERROR.
func TestRemoteWriteRefusesBadSeries(t *testing.T) {
	t.Parallel()
	now := time.Now().UnixMilli()
	many := make([]prompb.Label, 0, 70)
	for i := range 70 {
		many = append(many, prompb.Label{Name: fmt.Sprintf("l%02d", i), Value: "v"})
	}
	cases := map[string]prompb.TimeSeries{
		"invalid label name":  withLabels("up", now, prompb.Label{Name: "bad-name", Value: "x"}),
		"empty label name":    withLabels("up", now, prompb.Label{Name: "", Value: "x"}),
		"duplicate name":      withLabels("up", now, prompb.Label{Name: "node", Value: "n2"}),
		"NUL in value":        withLabels("up", now, prompb.Label{Name: "zone", Value: "a\x00b"}),
		"too many labels":     withLabels("up", now, many...),
		"1 MiB label value":   withLabels("up", now, prompb.Label{Name: "zone", Value: strings.Repeat("v", 1<<20)}),
		"invalid metric name": series("0bad metric", now, 1),
	}
	for name, bad := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			db := openDB(t)
			var logs bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			h, err := ingest.New(db, ingest.Options{Logger: log})
			require.NoError(t, err)
			w := post(h.RemoteWrite(), "/", "application/x-protobuf", rwBody(t, series("good", now, 1), bad), "Content-Encoding", "snappy")
			require.Equal(t, http.StatusBadRequest, w.Code, w.Body.String())
			require.Equal(t, "invalid_argument", errorCode(t, w))
			require.Less(t, w.Body.Len(), 2048, "the answer does not echo a huge value")
			require.Equal(t, 0, count(t, db, "good"), "a refused push is dropped whole")
			require.NotContains(t, logs.String(), "level=ERROR", "a sender's mistake is not a server error")
		})
	}
}

// TestSeriesBudgets: distinct series per push (400) and new series per
// minute per sender (429 with Retry-After); known series stay accepted and
// another sender has its own budget.
func TestSeriesBudgets(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	clock := time.Now()
	h, err := ingest.New(db, ingest.Options{
		Limits: ingest.Limits{MaxSeriesPerRequest: 5, MaxNewSeriesPerMinute: 8},
		KeyOf:  func(r *http.Request) string { return r.Header.Get("X-Sender") },
		Now:    func() time.Time { return clock },
	})
	require.NoError(t, err)
	now := time.Now().UnixMilli()
	push := func(sender string, t0 int64, names ...string) int {
		ts := make([]prompb.TimeSeries, 0, len(names))
		for _, n := range names {
			ts = append(ts, series(n, t0, 1))
		}
		w := post(h.RemoteWrite(), "/", "application/x-protobuf", rwBody(t, ts...), "Content-Encoding", "snappy", "X-Sender", sender)
		if w.Code == http.StatusTooManyRequests {
			require.NotEmpty(t, w.Header().Get("Retry-After"))
		}
		return w.Code
	}
	require.Equal(t, http.StatusBadRequest, push("a", now, "s1", "s2", "s3", "s4", "s5", "s6"), "6 series in one push")
	require.Equal(t, http.StatusNoContent, push("a", now, "s1", "s2", "s3", "s4", "s5"))
	require.Equal(t, http.StatusNoContent, push("a", now+1000, "s1", "s2", "s3", "s4", "s5"), "known series are not new")
	require.Equal(t, http.StatusNoContent, push("a", now+1000, "s6", "s7", "s8"))
	require.Equal(t, http.StatusTooManyRequests, push("a", now+2000, "s9"), "the ninth new series in a minute")
	require.Equal(t, http.StatusNoContent, push("b", now+2000, "t1"), "another sender has its own budget")
	clock = clock.Add(time.Minute)
	require.Equal(t, http.StatusNoContent, push("a", now+3000, "s9"), "a new minute, a new budget")
}

// TestOTLPRefusesOversizeAttributes: the same checks apply to OTLP.
func TestOTLPRefusesOversizeAttributes(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	h, err := ingest.New(db, ingest.Options{})
	require.NoError(t, err)
	md := otlpMetrics(time.Now())
	dp := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics().At(0).Gauge().DataPoints().At(0)
	dp.Attributes().PutStr("huge", strings.Repeat("x", 1<<20))
	pb, err := pmetricotlp.NewExportRequestFromMetrics(md).MarshalProto()
	require.NoError(t, err)
	w := post(h.OTLP(), "/", "application/x-protobuf", pb)
	require.Equal(t, http.StatusBadRequest, w.Code, w.Body.String()[:min(300, w.Body.Len())])
	require.Equal(t, "invalid_argument", errorCode(t, w))
	require.Equal(t, 0, count(t, db, "hw_gpu_utilization_ratio"))
}
