package query

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/common/model"
)

// Querier evaluates PromQL. Implementations are safe for concurrent use.
type Querier interface {
	// Instant evaluates expr at ts. Scalars come back as a one-sample vector
	// without labels.
	Instant(ctx context.Context, expr string, ts time.Time) (model.Vector, error)
	// Range evaluates expr at every step from start to end inclusive.
	Range(ctx context.Context, expr string, start, end time.Time, step time.Duration) (model.Matrix, error)
}

// Sentinel errors; wrapped errors carry the store's own message.
var (
	// ErrInvalidQuery: the expression does not parse, does not type-check or
	// asks for a result type the caller cannot use; retrying will not help.
	ErrInvalidQuery = errors.New("invalid query")
	// ErrTimeout: the query ran past the store's or the caller's deadline, or
	// touched more samples than allowed.
	ErrTimeout = errors.New("query timeout")
	// ErrUnavailable: the store could not be reached or failed internally.
	ErrUnavailable = errors.New("metrics store unavailable")
)

// validateRange checks the arguments every Range implementation shares, so
// both fail identically before doing any work.
func validateRange(start, end time.Time, step time.Duration) error {
	switch {
	case step <= 0:
		return fmt.Errorf("%w: step must be positive", ErrInvalidQuery)
	case end.Before(start):
		return fmt.Errorf("%w: end must not be before start", ErrInvalidQuery)
	case end.Sub(start)/step > maxPoints:
		return fmt.Errorf("%w: more than %d points per series, raise step", ErrInvalidQuery, maxPoints)
	}
	return nil
}

// maxPoints mirrors Prometheus' own query_range limit of 11,000 points per
// series, so a query accepted here is accepted by a remote Prometheus too.
const maxPoints = 11000
