package metering

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
)

// ParseMonth parses YYYY-MM.
func ParseMonth(s string) (time.Time, error) {
	t, err := time.Parse("2006-01", s)
	if err != nil {
		return time.Time{}, controlplane.Invalidf("month must be YYYY-MM, not %q", s)
	}
	return t.UTC(), nil
}

// CloseStatement closes tenant's statement of month (YYYY-MM): the month's
// report is stored as it is now and never changes afterwards. The month
// must have ended; a month closed already is ErrConflict.
func (s *Service) CloseStatement(ctx context.Context, tenant, month, actor string) (*controlplane.Statement, error) {
	if tenant == "" {
		return nil, controlplane.Invalidf("tenant is required")
	}
	start, err := ParseMonth(month)
	if err != nil {
		return nil, err
	}
	if end := start.AddDate(0, 1, 0); end.After(s.now()) {
		return nil, controlplane.Invalidf("%s has not ended yet: a month can be closed from %s on", month,
			end.Format(controlplane.DateLayout))
	}
	rep, err := s.Report(ctx, ReportRequest{Tenant: tenant, Period: PeriodMonth, Start: start})
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(rep)
	if err != nil {
		return nil, fmt.Errorf("statement: %w", err)
	}
	st := &controlplane.Statement{Tenant: tenant, Month: month, Currency: rep.Currency, Total: rep.Total.Cost,
		Report: body, ClosedBy: actor}
	if err := s.store.CreateStatement(ctx, st); err != nil {
		return nil, err
	}
	return st, nil
}

// Statement returns a closed statement's report.
func (s *Service) Statement(ctx context.Context, tenant, month string) (*controlplane.Statement, *UsageReport, error) {
	if _, err := ParseMonth(month); err != nil {
		return nil, nil, err
	}
	st, err := s.store.GetStatement(ctx, tenant, month)
	if err != nil {
		return nil, nil, err
	}
	var rep UsageReport
	if err := json.Unmarshal(st.Report, &rep); err != nil {
		return nil, nil, fmt.Errorf("statement %s %s: %w", tenant, month, err)
	}
	return st, &rep, nil
}

// ListStatements lists closed statements ("" = every tenant).
func (s *Service) ListStatements(ctx context.Context, tenant string) ([]*controlplane.Statement, error) {
	return s.store.ListStatements(ctx, tenant)
}
