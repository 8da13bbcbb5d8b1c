package query

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
)

// VectorQuerier answers instant queries in PromQL's own types. The alert
// engine's rule evaluation uses it when the Querier has it (the embedded
// engine), so a rule's result is not converted to model.Vector and back
// every evaluation; native histograms come through as they are.
type VectorQuerier interface {
	InstantVector(ctx context.Context, expr string, ts time.Time) (promql.Vector, error)
}

var _ VectorQuerier = (*Embedded)(nil)

// InstantVector implements VectorQuerier: Instant without the conversion.
// Scalars come back as a one-sample vector without labels.
func (e *Embedded) InstantVector(ctx context.Context, expr string, ts time.Time) (promql.Vector, error) {
	q, err := e.engine.NewInstantQuery(ctx, e.queryable, nil, expr, ts)
	if err != nil {
		return nil, classify(err)
	}
	defer q.Close()
	res := q.Exec(ctx)
	if res.Err != nil {
		return nil, classify(res.Err)
	}
	switch v := res.Value.(type) {
	case promql.Vector:
		// An instant query's vector is its own allocation; Close returns
		// only the range evaluation's pooled points.
		return v, nil
	case promql.Scalar:
		return promql.Vector{{Metric: labels.EmptyLabels(), T: v.T, F: v.V}}, nil
	default:
		return nil, fmt.Errorf("%w: instant query returned %s, want vector or scalar", ErrInvalidQuery, res.Value.Type())
	}
}
