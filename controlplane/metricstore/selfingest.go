package metricstore

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/metadata"
	"github.com/prometheus/prometheus/storage"

	"github.com/heteroflow/heteroflow/controlplane/metricstore/ingest"
)

// SelfJob is the job label of self-ingested series, so
// rate(heteroflow_ingest_samples_total{job="heteroflow"}[5m]) works.
const SelfJob = "heteroflow"

func (s *Store) startSelfIngest(cfg Config, o Options, backend storage.AppendableV2, meta *ingest.MetadataStore) {
	if o.Gatherer == nil || cfg.SelfIngestInterval == 0 {
		return
	}
	instance := o.Instance
	if instance == "" {
		instance, _ = os.Hostname()
	}
	si := &selfIngester{gatherer: o.Gatherer, backend: backend, meta: meta, job: SelfJob, instance: instance}
	ctx, cancel := context.WithCancel(context.Background())
	s.stop, s.done = cancel, make(chan struct{})
	go func() {
		defer close(s.done)
		t := time.NewTicker(cfg.SelfIngestInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-t.C:
				if n, err := si.ingest(ctx, now); err != nil {
					s.logger.Warn("self-ingesting server metrics", "err", err, "samples", n)
				}
			}
		}
	}()
}

// selfIngester writes one gather of a registry into the store, as a
// Prometheus scrape of /metrics would (classic histogram/summary series).
type selfIngester struct {
	gatherer      prometheus.Gatherer
	backend       storage.AppendableV2
	meta          *ingest.MetadataStore
	job, instance string
}

func (si *selfIngester) ingest(ctx context.Context, now time.Time) (int, error) {
	mfs, gatherErr := si.gatherer.Gather() // partial results are still worth storing
	app := si.backend.AppenderV2(ctx)
	ts := now.UnixMilli()
	n := 0
	b := labels.NewBuilder(labels.EmptyLabels())
	add := func(m *dto.Metric, name string, v float64, extra ...string) error {
		b.Reset(labels.EmptyLabels())
		for _, lp := range m.GetLabel() {
			b.Set(lp.GetName(), lp.GetValue())
		}
		for i := 0; i+1 < len(extra); i += 2 {
			b.Set(extra[i], extra[i+1])
		}
		b.Set("job", si.job)
		b.Set("instance", si.instance)
		b.Set(labels.MetricName, name)
		t := ts
		if m.TimestampMs != nil {
			t = m.GetTimestampMs()
		}
		if _, err := app.Append(0, b.Labels(), 0, t, v, nil, nil, storage.AOptions{}); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		n++
		return nil
	}
	for _, mf := range mfs {
		name := mf.GetName()
		si.meta.Set(name, metadata.Metadata{Type: metricType(mf.GetType()), Help: mf.GetHelp(), Unit: mf.GetUnit()})
		for _, m := range mf.GetMetric() {
			if err := appendMetric(mf.GetType(), name, m, add); err != nil {
				_ = app.Rollback()
				return 0, err
			}
		}
	}
	if err := app.Commit(); err != nil {
		return 0, err
	}
	return n, gatherErr
}

type addFunc func(m *dto.Metric, name string, v float64, extra ...string) error

func appendMetric(t dto.MetricType, name string, m *dto.Metric, add addFunc) error {
	switch t {
	case dto.MetricType_COUNTER:
		return add(m, name, m.GetCounter().GetValue())
	case dto.MetricType_GAUGE:
		return add(m, name, m.GetGauge().GetValue())
	case dto.MetricType_UNTYPED:
		return add(m, name, m.GetUntyped().GetValue())
	case dto.MetricType_SUMMARY:
		s := m.GetSummary()
		for _, q := range s.GetQuantile() {
			if err := add(m, name, q.GetValue(), model.QuantileLabel, formatFloat(q.GetQuantile())); err != nil {
				return err
			}
		}
		if err := add(m, name+"_sum", s.GetSampleSum()); err != nil {
			return err
		}
		return add(m, name+"_count", float64(s.GetSampleCount()))
	case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
		h := m.GetHistogram()
		infSeen := false
		for _, bk := range h.GetBucket() {
			infSeen = infSeen || math.IsInf(bk.GetUpperBound(), 1)
			if err := add(m, name+"_bucket", float64(bk.GetCumulativeCount()), model.BucketLabel, formatFloat(bk.GetUpperBound())); err != nil {
				return err
			}
		}
		if !infSeen { // the text exposition always has +Inf; PromQL's histogram_quantile needs it
			if err := add(m, name+"_bucket", float64(h.GetSampleCount()), model.BucketLabel, "+Inf"); err != nil {
				return err
			}
		}
		if err := add(m, name+"_sum", h.GetSampleSum()); err != nil {
			return err
		}
		return add(m, name+"_count", float64(h.GetSampleCount()))
	}
	return nil
}

func formatFloat(f float64) string {
	if math.IsInf(f, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

func metricType(t dto.MetricType) model.MetricType {
	switch t {
	case dto.MetricType_COUNTER:
		return model.MetricTypeCounter
	case dto.MetricType_GAUGE:
		return model.MetricTypeGauge
	case dto.MetricType_SUMMARY:
		return model.MetricTypeSummary
	case dto.MetricType_HISTOGRAM:
		return model.MetricTypeHistogram
	case dto.MetricType_GAUGE_HISTOGRAM:
		return model.MetricTypeGaugeHistogram
	default:
		return model.MetricTypeUnknown
	}
}
