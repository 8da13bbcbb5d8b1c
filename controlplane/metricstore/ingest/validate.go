package ingest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
)

// ErrLimited marks a push refused because its sender is over a series
// budget; the guard answers 429 with Retry-After.
var ErrLimited = errors.New("series limit exceeded")

// Series validation, applied to every series of a push before it reaches
// the backend (both protocols end in the same appender): Prometheus' own
// label-name validation (legacy names unless UTF8Names), no duplicate
// names, no NUL bytes, bounded label count and lengths; bounded distinct
// series per request and new series per minute per sender. A push with one
// bad series is refused whole (400), as Prometheus' receiver does.

// validator holds the per-sender new-series budgets, shared by all requests.
type validator struct {
	limits Limits
	scheme model.ValidationScheme
	now    func() time.Time

	mu      sync.Mutex
	seen    map[uint64]int64 // series hash → unix second last pushed
	windows map[string]*seriesWindow
	swept   int64
}

type seriesWindow struct {
	start int64 // unix second the minute began
	count int
}

func newValidator(l Limits, now func() time.Time) *validator {
	scheme := model.LegacyValidation
	if l.UTF8Names {
		scheme = model.UTF8Validation
	}
	return &validator{limits: l, scheme: scheme, now: now, seen: map[uint64]int64{}, windows: map[string]*seriesWindow{}}
}

// seriesTTL: a series not pushed for this long counts as new again.
const seriesTTL = int64(time.Hour / time.Second)

// check validates one series' labels.
func (v *validator) check(ls labels.Labels) error {
	if n := ls.Len(); n > v.limits.MaxLabelsPerSeries {
		return fmt.Errorf("%w: series has %d labels, more than %d: %s", ErrRejected, n, v.limits.MaxLabelsPerSeries, clip(ls.String()))
	}
	if !ls.IsValid(v.scheme) {
		return fmt.Errorf("%w: invalid metric or label name, or a value that is not UTF-8: %s", ErrRejected, clip(ls.String()))
	}
	if name, dup := ls.HasDuplicateLabelNames(); dup {
		return fmt.Errorf("%w: duplicate label name %q in %s", ErrRejected, name, clip(ls.String()))
	}
	var err error
	ls.Range(func(l labels.Label) {
		switch {
		case err != nil:
		case len(l.Name) > v.limits.MaxLabelNameLength:
			err = fmt.Errorf("%w: label name longer than %d bytes: %s", ErrRejected, v.limits.MaxLabelNameLength, clip(l.Name))
		case len(l.Value) > v.limits.MaxLabelValueLength:
			err = fmt.Errorf("%w: value of label %q longer than %d bytes", ErrRejected, clip(l.Name), v.limits.MaxLabelValueLength)
		case strings.IndexByte(l.Name, 0) >= 0 || strings.IndexByte(l.Value, 0) >= 0:
			err = fmt.Errorf("%w: NUL byte in label %q", ErrRejected, clip(l.Name))
		}
	})
	return err
}

// admitNew counts hash against key's new-series budget when the series has
// not been pushed within seriesTTL.
func (v *validator) admitNew(key string, hash uint64) error {
	now := v.now().Unix()
	v.mu.Lock()
	defer v.mu.Unlock()
	if last, ok := v.seen[hash]; ok && now-last < seriesTTL {
		v.seen[hash] = now
		return nil
	}
	w := v.windows[key]
	if w == nil || now-w.start >= 60 {
		w = &seriesWindow{start: now}
		v.windows[key] = w
	}
	if w.count >= v.limits.MaxNewSeriesPerMinute {
		return fmt.Errorf("%w: more than %d new series per minute from %s", ErrLimited, v.limits.MaxNewSeriesPerMinute, key)
	}
	w.count++
	v.seen[hash] = now
	if now-v.swept >= 60 {
		v.sweep(now)
	}
	return nil
}

// sweep forgets series and windows that expired (the lock is held).
func (v *validator) sweep(now int64) {
	v.swept = now
	for h, last := range v.seen {
		if now-last >= seriesTTL {
			delete(v.seen, h)
		}
	}
	for k, w := range v.windows {
		if now-w.start >= 60 {
			delete(v.windows, k)
		}
	}
}

// clip keeps error messages (and logs) short whatever was sent.
func clip(s string) string {
	const max = 200
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}
