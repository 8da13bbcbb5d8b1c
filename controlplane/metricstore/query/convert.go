package query

import (
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
)

// VectorToModel converts an engine vector into the client model, the shape
// both Querier implementations return.
func VectorToModel(v promql.Vector) model.Vector {
	out := make(model.Vector, 0, len(v))
	for _, s := range v {
		ms := &model.Sample{Metric: metricToModel(s.Metric), Timestamp: model.Time(s.T), Value: model.SampleValue(s.F)}
		if s.H != nil {
			ms.Histogram = histogramToModel(s.H)
		}
		out = append(out, ms)
	}
	return out
}

// MatrixToModel converts an engine matrix into the client model.
func MatrixToModel(m promql.Matrix) model.Matrix {
	out := make(model.Matrix, 0, len(m))
	for _, s := range m {
		ss := &model.SampleStream{Metric: metricToModel(s.Metric)}
		if len(s.Floats) > 0 {
			ss.Values = make([]model.SamplePair, len(s.Floats))
			for i, p := range s.Floats {
				ss.Values[i] = model.SamplePair{Timestamp: model.Time(p.T), Value: model.SampleValue(p.F)}
			}
		}
		for _, p := range s.Histograms {
			ss.Histograms = append(ss.Histograms, model.SampleHistogramPair{Timestamp: model.Time(p.T), Histogram: histogramToModel(p.H)})
		}
		out = append(out, ss)
	}
	return out
}

func metricToModel(ls labels.Labels) model.Metric {
	m := make(model.Metric, ls.Len())
	ls.Range(func(l labels.Label) { m[model.LabelName(l.Name)] = model.LabelValue(l.Value) })
	return m
}

// histogramToModel renders a native histogram the way Prometheus' HTTP API
// does (count, sum and absolute buckets with boundary rules), so an embedded
// result equals what a remote Prometheus would answer.
func histogramToModel(h *histogram.FloatHistogram) *model.SampleHistogram {
	out := &model.SampleHistogram{Count: model.FloatString(h.Count), Sum: model.FloatString(h.Sum)}
	it := h.AllBucketIterator()
	for it.Next() {
		b := it.At()
		if b.Count == 0 {
			continue
		}
		out.Buckets = append(out.Buckets, &model.HistogramBucket{
			Boundaries: boundaries(b),
			Lower:      model.FloatString(b.Lower),
			Upper:      model.FloatString(b.Upper),
			Count:      model.FloatString(b.Count),
		})
	}
	return out
}

// boundaries encodes open/closed ends with Prometheus' codes:
// 0 open left, 1 open right, 2 open both, 3 closed both.
func boundaries(b histogram.Bucket[float64]) int32 {
	switch {
	case b.LowerInclusive && b.UpperInclusive:
		return 3
	case b.LowerInclusive:
		return 1
	case b.UpperInclusive:
		return 0
	default:
		return 2
	}
}
