package ingest

import (
	"context"
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/model/exemplar"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/metadata"
	"github.com/prometheus/prometheus/storage"
)

// ErrUnavailable marks a backend failure the sender should retry later
// (e.g. the remote store is down). Appenders wrap it; the guard answers 503
// with Retry-After instead of 500.
var ErrUnavailable = errors.New("metrics backend unavailable")

// ErrRejected marks a backend that refused the data itself (a 4xx from a
// remote store); the guard answers 400 with the backend's reason, because
// resending the same data cannot succeed.
var ErrRejected = errors.New("metrics backend rejected the samples")

// instrumented wraps the backend appendable to count committed samples,
// collect metadata and remember a commit error for the guard.
type instrumented struct {
	next     storage.AppendableV2
	valid    *validator
	meta     *MetadataStore
	samples  prometheus.Counter
	failures prometheus.Counter
}

func (a *instrumented) AppenderV2(ctx context.Context) storage.AppenderV2 {
	return &countingAppender{parent: a, next: a.next.AppenderV2(ctx), outcome: outcomeFrom(ctx)}
}

// checkSeries validates ls once per series of this push and counts it
// against the request's and the sender's budgets.
func (c *countingAppender) checkSeries(ls labels.Labels) error {
	v := c.parent.valid
	if v == nil || c.outcome == nil {
		return nil // not a push (self-ingestion writes the backend directly)
	}
	h := ls.Hash()
	if _, ok := c.series[h]; ok {
		return nil
	}
	if err := v.check(ls); err != nil {
		return err
	}
	if err := checkHost(ls, c.outcome.host); err != nil {
		return err
	}
	if len(c.series) >= v.limits.MaxSeriesPerRequest {
		return fmt.Errorf("%w: more than %d series in one push; send smaller batches", ErrRejected, v.limits.MaxSeriesPerRequest)
	}
	if err := v.admitNew(c.outcome.key, h); err != nil {
		return err
	}
	if c.series == nil {
		c.series = map[uint64]struct{}{}
	}
	c.series[h] = struct{}{}
	return nil
}

type countingAppender struct {
	parent  *instrumented
	next    storage.AppenderV2
	outcome *outcome
	n       int
	// meta is per-transaction so the shared store is touched once per family
	// per request rather than once per sample.
	meta map[string]metadata.Metadata
	// series are the distinct series of this push already validated.
	series map[uint64]struct{}
}

var _ storage.ExemplarAppenderV2 = (*countingAppender)(nil)

func (c *countingAppender) Append(ref storage.SeriesRef, ls labels.Labels, st, t int64, v float64, h *histogram.Histogram, fh *histogram.FloatHistogram, opts storage.AppendV2Options) (storage.SeriesRef, error) {
	if err := c.checkSeries(ls); err != nil {
		c.outcome.set(err)
		return 0, err
	}
	ref, err := c.next.Append(ref, ls, st, t, v, h, fh, opts)
	if err == nil || errors.Is(err, (*storage.AppendPartialError)(nil)) {
		c.n++
	}
	if opts.MetricFamilyName != "" && !opts.Metadata.IsEmpty() {
		if c.meta == nil {
			c.meta = map[string]metadata.Metadata{}
		}
		c.meta[opts.MetricFamilyName] = opts.Metadata
	}
	return ref, err
}

func (c *countingAppender) AppendExemplars(ref storage.SeriesRef, ls labels.Labels, es []exemplar.Exemplar) (storage.SeriesRef, error) {
	ea, ok := c.next.(storage.ExemplarAppenderV2)
	if !ok {
		return ref, fmt.Errorf("backend appender %T does not store exemplars", c.next)
	}
	return ea.AppendExemplars(ref, ls, es)
}

func (c *countingAppender) Commit() error {
	if err := c.next.Commit(); err != nil {
		c.parent.failures.Inc()
		c.outcome.set(err)
		return err
	}
	c.parent.samples.Add(float64(c.n))
	for fam, md := range c.meta {
		c.parent.meta.Set(fam, md)
	}
	return nil
}

func (c *countingAppender) Rollback() error {
	return c.next.Rollback()
}

// outcome carries the backend's commit error (or a validation refusal) from
// the appender back up to the guard, through the request context
// Prometheus' handlers pass down; key names the sender for its budgets.
type outcome struct {
	err error
	key string
	// host is the only host_name the push may carry ("" = any).
	host string
}

func (o *outcome) set(err error) {
	if o != nil {
		o.err = err
	}
}

type outcomeKey struct{}

func outcomeFrom(ctx context.Context) *outcome {
	o, _ := ctx.Value(outcomeKey{}).(*outcome)
	return o
}
