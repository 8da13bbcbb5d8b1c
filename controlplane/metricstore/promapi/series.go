package promapi

import (
	"errors"
	"net/http"
	"slices"
	"sort"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/util/annotations"
)

// rangeQuerier opens a storage querier over the request's start/end.
func (a *API) rangeQuerier(r *http.Request) (storage.Querier, *storage.SelectHints, *apiError) {
	start, err := timeParam(r, "start", minTime)
	if err != nil {
		return nil, nil, badData(err)
	}
	end, err := timeParam(r, "end", maxTime)
	if err != nil {
		return nil, nil, badData(err)
	}
	mint, maxt := start.UnixMilli(), end.UnixMilli()
	q, err := a.queryable.Querier(mint, maxt)
	if err != nil {
		return nil, nil, &apiError{typ: errInternal, err: err}
	}
	return q, &storage.SelectHints{Start: mint, End: maxt, Func: "series"}, nil
}

func (a *API) series(r *http.Request) (result, *apiError) {
	sets, err := matcherSets(a.parser, r)
	if err != nil {
		return result{}, badData(err)
	}
	if len(sets) == 0 {
		return result{}, badData(errors.New("no match[] parameter provided"))
	}
	limit, err := limitParam(r)
	if err != nil {
		return result{}, badData(err)
	}
	q, hints, apiErr := a.rangeQuerier(r)
	if apiErr != nil {
		return result{}, apiErr
	}
	// The series' labels may point into the querier's memory (index
	// symbols of a block): close it only after the response is written.
	closeQ := func() { _ = q.Close() }
	ok := false
	defer func() {
		if !ok {
			closeQ()
		}
	}()

	var ss storage.SeriesSet
	if len(sets) == 1 {
		ss = q.Select(r.Context(), false, hints, sets[0]...)
	} else {
		parts := make([]storage.SeriesSet, 0, len(sets))
		for _, ms := range sets {
			parts = append(parts, q.Select(r.Context(), true, hints, ms...)) // merging needs sorted input
		}
		ss = storage.NewMergeSeriesSet(parts, 0, storage.ChainedSeriesMerge)
	}
	out := []labels.Labels{}
	var warnings annotations.Annotations
	for ss.Next() {
		if limit > 0 && len(out) >= limit {
			warnings.Add(errors.New("results truncated due to limit"))
			break
		}
		out = append(out, ss.At().Labels())
	}
	warnings.Merge(ss.Warnings())
	if err := ss.Err(); err != nil {
		return result{}, &apiError{typ: errInternal, err: err}
	}
	w, _ := warnings.AsStrings("", 10, 0)
	ok = true
	return result{data: out, warnings: w, finalizer: closeQ}, nil
}

func (a *API) labelNames(r *http.Request) (result, *apiError) {
	return a.labelQuery(r, func(q storage.Querier, hints *storage.LabelHints, ms []*labels.Matcher) ([]string, annotations.Annotations, error) {
		return q.LabelNames(r.Context(), hints, ms...)
	})
}

func (a *API) labelValues(r *http.Request) (result, *apiError) {
	name := chi.URLParam(r, "name")
	if !validLabelName(name) {
		return result{}, badData(errors.New("invalid label name: " + name))
	}
	return a.labelQuery(r, func(q storage.Querier, hints *storage.LabelHints, ms []*labels.Matcher) ([]string, annotations.Annotations, error) {
		return q.LabelValues(r.Context(), name, hints, ms...)
	})
}

// labelQuery runs get once per match[] set (or once unfiltered) and returns
// the sorted union, as Prometheus does.
func (a *API) labelQuery(r *http.Request, get func(storage.Querier, *storage.LabelHints, []*labels.Matcher) ([]string, annotations.Annotations, error)) (result, *apiError) {
	sets, err := matcherSets(a.parser, r)
	if err != nil {
		return result{}, badData(err)
	}
	limit, err := limitParam(r)
	if err != nil {
		return result{}, badData(err)
	}
	q, _, apiErr := a.rangeQuerier(r)
	if apiErr != nil {
		return result{}, apiErr
	}
	// Label names and values may point into the querier's memory ("not
	// safe to use beyond the lifetime of the querier"): close it only after
	// the response is written.
	closeQ := func() { _ = q.Close() }
	ok := false
	defer func() {
		if !ok {
			closeQ()
		}
	}()
	if len(sets) == 0 {
		sets = [][]*labels.Matcher{nil}
	}
	seen := map[string]struct{}{}
	var warnings annotations.Annotations
	for _, ms := range sets {
		vals, ws, err := get(q, &storage.LabelHints{}, ms)
		if err != nil {
			return result{}, &apiError{typ: errExec, err: err}
		}
		warnings.Merge(ws)
		for _, v := range vals {
			seen[v] = struct{}{}
		}
	}
	out := make([]string, 0, len(seen))
	for v := range seen {
		out = append(out, v)
	}
	sort.Strings(out)
	if limit > 0 && len(out) > limit {
		out = slices.Clip(out[:limit])
		warnings.Add(errors.New("results truncated due to limit"))
	}
	w, _ := warnings.AsStrings("", 10, 0)
	ok = true
	return result{data: out, warnings: w, finalizer: closeQ}, nil
}
