package query

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/storage"
)

// Embedded evaluates PromQL with an in-process promql.Engine over a
// storage.Queryable (normally the server's *tsdb.DB).
type Embedded struct {
	engine    *promql.Engine
	queryable storage.Queryable
}

var _ Querier = (*Embedded)(nil)

// NewEmbedded returns a Querier over queryable. The engine carries the
// limits (timeout, max samples, concurrency) configured by the caller.
func NewEmbedded(engine *promql.Engine, queryable storage.Queryable) *Embedded {
	return &Embedded{engine: engine, queryable: queryable}
}

// Instant implements Querier.
func (e *Embedded) Instant(ctx context.Context, expr string, ts time.Time) (model.Vector, error) {
	v, err := e.InstantVector(ctx, expr, ts)
	if err != nil {
		return nil, err
	}
	return VectorToModel(v), nil
}

// Range implements Querier.
func (e *Embedded) Range(ctx context.Context, expr string, start, end time.Time, step time.Duration) (model.Matrix, error) {
	if err := validateRange(start, end, step); err != nil {
		return nil, err
	}
	q, err := e.engine.NewRangeQuery(ctx, e.queryable, nil, expr, start, end, step)
	if err != nil {
		return nil, classify(err)
	}
	defer q.Close()
	res := q.Exec(ctx)
	if res.Err != nil {
		return nil, classify(res.Err)
	}
	m, ok := res.Value.(promql.Matrix)
	if !ok {
		return nil, fmt.Errorf("%w: range query returned %s, want matrix", ErrInvalidQuery, res.Value.Type())
	}
	return MatrixToModel(m), nil
}

// classify maps engine errors onto this package's sentinels, keeping the
// engine's message (Prometheus users recognise it).
func classify(err error) error {
	var (
		parseErrs parser.ParseErrors
		parseErr  *parser.ParseErr
		timeout   promql.ErrQueryTimeout
		tooMany   promql.ErrTooManySamples
		canceled  promql.ErrQueryCanceled
	)
	switch {
	case errors.As(err, &parseErrs), errors.As(err, &parseErr):
		return fmt.Errorf("%w: %w", ErrInvalidQuery, err)
	case errors.As(err, &timeout), errors.As(err, &tooMany), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%w: %w", ErrTimeout, err)
	case errors.As(err, &canceled), errors.Is(err, context.Canceled):
		return fmt.Errorf("%w: %w", ErrTimeout, err)
	default:
		// Storage errors (e.g. a closed TSDB) and anything unknown.
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
}
