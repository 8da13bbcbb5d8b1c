package alerts

import (
	"context"
	"encoding/json"

	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/storage"
)

type rulefmtGroup = rulefmt.RuleGroup

func jsonString(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

// discard is the Appendable when rule output has nowhere to go.
type discard struct{}

func (discard) AppenderV2(context.Context) storage.AppenderV2 { return discard{} }

func (discard) Append(storage.SeriesRef, labels.Labels, int64, int64, float64, *histogram.Histogram,
	*histogram.FloatHistogram, storage.AppendV2Options) (storage.SeriesRef, error) {
	return 0, nil
}
func (discard) Commit() error   { return nil }
func (discard) Rollback() error { return nil }
