package forward

import (
	"context"

	"github.com/prometheus/prometheus/model/exemplar"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/prompb"
	"github.com/prometheus/prometheus/storage"
)

// appender batches one transaction into a WriteRequest, one TimeSeries per
// distinct label set, and sends it at Commit.
type appender struct {
	f      *Forwarder
	ctx    context.Context
	req    prompb.WriteRequest
	index  map[uint64][]int // label hash → positions in req.Timeseries
	labels []labels.Labels  // label set per position, for collision checks
	seen   map[string]bool  // metric families whose metadata is queued
}

var _ storage.ExemplarAppenderV2 = (*appender)(nil)

// series returns the position for ls, adding it when new. The returned
// SeriesRef is position+1 so the zero ref keeps meaning "unknown".
func (a *appender) series(ref storage.SeriesRef, ls labels.Labels) int {
	if ref > 0 && int(ref) <= len(a.labels) && labels.Equal(a.labels[ref-1], ls) {
		return int(ref) - 1
	}
	h := ls.Hash()
	for _, i := range a.index[h] {
		if labels.Equal(a.labels[i], ls) {
			return i
		}
	}
	i := len(a.req.Timeseries)
	// Callers may reuse ls' memory after Append; the batch is encoded only
	// at Commit, so both the wire labels and the collision check use a copy.
	own := ls.Copy()
	a.req.Timeseries = append(a.req.Timeseries, prompb.TimeSeries{Labels: prompb.FromLabels(own, nil)})
	a.labels = append(a.labels, own)
	a.index[h] = append(a.index[h], i)
	return i
}

func (a *appender) Append(ref storage.SeriesRef, ls labels.Labels, _, t int64, v float64, h *histogram.Histogram, fh *histogram.FloatHistogram, opts storage.AppendV2Options) (storage.SeriesRef, error) {
	i := a.series(ref, ls)
	ts := &a.req.Timeseries[i]
	switch {
	case fh != nil:
		ts.Histograms = append(ts.Histograms, prompb.FromFloatHistogram(t, fh))
	case h != nil:
		ts.Histograms = append(ts.Histograms, prompb.FromIntHistogram(t, h))
	default:
		ts.Samples = append(ts.Samples, prompb.Sample{Timestamp: t, Value: v})
	}
	for _, e := range opts.Exemplars {
		ts.Exemplars = append(ts.Exemplars, toExemplar(e))
	}
	if fam := opts.MetricFamilyName; fam != "" && !opts.Metadata.IsEmpty() && !a.seen[fam] {
		if a.seen == nil {
			a.seen = map[string]bool{}
		}
		a.seen[fam] = true
		a.req.Metadata = append(a.req.Metadata, prompb.MetricMetadata{
			Type:             prompb.FromMetadataType(opts.Metadata.Type),
			MetricFamilyName: fam,
			Help:             opts.Metadata.Help,
			Unit:             opts.Metadata.Unit,
		})
	}
	return storage.SeriesRef(i + 1), nil
}

func (a *appender) AppendExemplars(ref storage.SeriesRef, ls labels.Labels, es []exemplar.Exemplar) (storage.SeriesRef, error) {
	i := a.series(ref, ls)
	for _, e := range es {
		a.req.Timeseries[i].Exemplars = append(a.req.Timeseries[i].Exemplars, toExemplar(e))
	}
	return storage.SeriesRef(i + 1), nil
}

func toExemplar(e exemplar.Exemplar) prompb.Exemplar {
	return prompb.Exemplar{Labels: prompb.FromLabels(e.Labels, nil), Value: e.Value, Timestamp: e.Ts}
}

// Commit sends the batch; an empty transaction sends nothing.
func (a *appender) Commit() error {
	if len(a.req.Timeseries) == 0 && len(a.req.Metadata) == 0 {
		return nil
	}
	return a.f.send(a.ctx, &a.req)
}

// Rollback drops the batch: nothing was sent yet.
func (a *appender) Rollback() error {
	a.req = prompb.WriteRequest{}
	return nil
}
