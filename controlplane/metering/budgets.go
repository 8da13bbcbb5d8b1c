package metering

import (
	"context"
	"fmt"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
)

// budgetEvery is how often every server recomputes this month's spend
// against the budgets (the gauge, the audit events and the hard stop).
const budgetEvery = time.Minute

// budgetState is one budget's spend this month.
type budgetState struct {
	budget *controlplane.Budget
	cost   float64
	ratio  float64
}

// PutBudget creates or replaces the budget of a tenant or project.
func (s *Service) PutBudget(ctx context.Context, b *controlplane.Budget) error {
	if err := b.Validate(); err != nil {
		return err
	}
	if err := s.store.PutBudget(ctx, b); err != nil {
		return err
	}
	return s.checkBudgets(ctx)
}

// DeleteBudget removes a budget.
func (s *Service) DeleteBudget(ctx context.Context, id int64) error {
	if err := s.store.DeleteBudget(ctx, id); err != nil {
		return err
	}
	return s.checkBudgets(ctx)
}

// BudgetStatus is a budget with this month's spend.
type BudgetStatus struct {
	Budget *controlplane.Budget
	Cost   float64
	Ratio  float64
}

// Budgets lists budgets with this month's spend (as of the last check).
func (s *Service) Budgets(ctx context.Context) ([]BudgetStatus, error) {
	bs, err := s.store.ListBudgets(ctx)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]BudgetStatus, 0, len(bs))
	for _, b := range bs {
		st := BudgetStatus{Budget: b}
		if cur, ok := s.budgets[budgetKey(b.Tenant, b.Project)]; ok {
			st.Cost, st.Ratio = cur.cost, cur.ratio
		}
		out = append(out, st)
	}
	return out, nil
}

func budgetKey(tenant, project string) string { return tenant + "\x00" + project }

// checkBudgets prices this month's usage per tenant and project, sets the
// used-ratio gauge (the shipped rules alert at 80 % and 100 %), records an
// audit event when a budget crosses a level, and keeps the state the hard
// stop reads.
func (s *Service) checkBudgets(ctx context.Context) error {
	bs, err := s.store.ListBudgets(ctx)
	if err != nil {
		return err
	}
	now := s.now()
	month := now.UTC().Format("2006-01")
	state := map[string]*budgetState{}
	if len(bs) > 0 {
		rep, err := s.Report(ctx, ReportRequest{Period: PeriodMonth, Start: now, TopTasks: 1})
		if err != nil {
			return err
		}
		byTenant, byProject := map[string]float64{}, map[string]float64{}
		for _, l := range rep.ByTenant {
			byTenant[l.Tenant] = l.cost
		}
		for _, l := range rep.ByProject {
			byProject[budgetKey(l.Tenant, l.Project)] = l.cost
		}
		for _, b := range bs {
			cost := byTenant[b.Tenant]
			if b.Project != "" {
				cost = byProject[budgetKey(b.Tenant, b.Project)]
			}
			state[budgetKey(b.Tenant, b.Project)] = &budgetState{budget: b, cost: cost, ratio: cost / b.Amount}
		}
	}
	s.mu.Lock()
	s.budgets = state
	type crossing struct {
		st    *budgetState
		level int
	}
	var crossed []crossing
	for key, st := range state {
		level := 0
		switch {
		case st.ratio >= 1:
			level = 100
		case st.ratio >= 0.8:
			level = 80
		}
		lk := month + "\x00" + key
		if level > s.budgetLevel[lk] {
			crossed = append(crossed, crossing{st, level})
		}
		s.budgetLevel[lk] = max(level, s.budgetLevel[lk])
	}
	s.mu.Unlock()
	s.metrics.budget.Reset()
	for _, st := range state {
		s.metrics.budget.WithLabelValues(st.budget.Tenant, st.budget.Project).Set(st.ratio)
	}
	for _, c := range crossed {
		b := c.st.budget
		s.record("system", fmt.Sprintf("billing.budget.%d", c.level), "budget/"+b.Tenant+"/"+b.Project,
			fmt.Sprintf("%s: %.2f of %.2f %s spent (%.0f%%)", month, c.st.cost, b.Amount, b.Currency, c.st.ratio*100))
	}
	return nil
}

// Gate is the hard stop of budgets, asked by admission for each new task:
// when the task's tenant or project budget is spent and has a hard stop,
// it answers the budget's policy (refuse: the task fails; queue: it waits)
// and why. The zero policy admits the task.
func (s *Service) Gate(spec *controlplane.TaskSpec) (controlplane.QuotaPolicy, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, key := range []string{budgetKey(spec.Tenant, spec.Project), budgetKey(spec.Tenant, "")} {
		st, ok := s.budgets[key]
		if !ok || st.budget.HardStop == "" || st.ratio < 1 {
			continue
		}
		scope := st.budget.Tenant
		if st.budget.Project != "" {
			scope += "/" + st.budget.Project
		}
		return controlplane.QuotaPolicy(st.budget.HardStop), fmt.Sprintf("the monthly budget of %s is spent (%.2f of %.2f %s)",
			scope, st.cost, st.budget.Amount, st.budget.Currency)
	}
	return "", ""
}
