package alerts

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	promrules "github.com/prometheus/prometheus/rules"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/metricstore/query"
)

// TestAlert is one alert a rule produces when tested.
type TestAlert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	Value       float64           `json:"value"`
	State       string            `json:"state"` // pending or firing
	ActiveAt    time.Time         `json:"active_at"`
}

// maxTestSteps bounds the evaluations of one test.
const maxTestSteps = 240

// TestRule evaluates r against live data as the engine would have over the
// last `for` (stepping the evaluation interval up to now), without storing
// or notifying anything, and returns the alerts it would hold now.
func (e *Engine) TestRule(ctx context.Context, r *controlplane.AlertRule, now time.Time) ([]TestAlert, error) {
	if err := ValidateRule(r); err != nil {
		return nil, err
	}
	g := CustomGroup(r)
	rule := g.Groups[0].Rules[0]
	expr, err := e.parser.ParseExpr(rule.Expr)
	if err != nil {
		return nil, controlplane.InvalidCode(CodeInvalidPromQL, []string{"detail", err.Error()}, "invalid PromQL in expr: %v", err)
	}
	ar := promrules.NewAlertingRule(rule.Alert, expr, r.For, r.KeepFiringFor, labels.FromMap(rule.Labels),
		labels.FromMap(rule.Annotations), labels.EmptyLabels(), e.o.ExternalURL, true, nopLogger)
	step := e.o.Interval
	if r.For/step > maxTestSteps {
		step = r.For / maxTestSteps
	}
	for ts := now.Add(-r.For); !ts.After(now); ts = ts.Add(step) {
		if _, err := ar.Eval(ctx, 0, ts, e.queryFunc, e.mopts.ExternalURL, 0); err != nil {
			if errors.Is(err, query.ErrInvalidQuery) {
				return nil, controlplane.InvalidCode(CodeInvalidPromQL, []string{"detail", err.Error()}, "%v", err)
			}
			return nil, fmt.Errorf("test rule: %w", err)
		}
	}
	out := []TestAlert{}
	for _, a := range ar.ActiveAlerts() {
		out = append(out, TestAlert{Labels: a.Labels.Map(), Annotations: a.Annotations.Map(), Value: a.Value,
			State: a.State.String(), ActiveAt: a.ActiveAt})
	}
	sort.Slice(out, func(i, j int) bool {
		return labels.FromMap(out[i].Labels).String() < labels.FromMap(out[j].Labels).String()
	})
	return out, nil
}
