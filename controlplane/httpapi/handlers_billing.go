package httpapi

import (
	"bytes"
	"context"
	"encoding/json"

	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/auth"
	"github.com/heteroflow/heteroflow/controlplane/metering"
)

// Billing routes: usage reports and exports, the price book and monthly
// statements. Who sees what: admins everything; an operator with a tenant
// (a tenant administrator) that tenant; users and viewers their own usage.

type billingAPI struct {
	a   *API
	svc *metering.Service
}

// RegisterBilling mounts the billing routes over svc.
func (a *API) RegisterBilling(svc *metering.Service) {
	b := &billingAPI{a: a, svc: svc}
	tags := []string{"billing"}
	read, write := Perm(auth.ResBilling, auth.ActRead), Perm(auth.ResBilling, auth.ActWrite)
	Register(a, huma.Operation{OperationID: "billing-report", Method: http.MethodGet, Path: Prefix + "/billing/report",
		Summary: "Usage and cost report of a tenant, project or user for a day, week or month", Tags: tags,
		Errors: []int{400, 403, 404}}, read, b.report)
	Register(a, huma.Operation{OperationID: "billing-report-export", Method: http.MethodGet, Path: Prefix + "/billing/report/export",
		Summary: "The report as CSV or XLSX", Tags: tags, Errors: []int{400, 403, 404}}, read, b.export)
	Register(a, huma.Operation{OperationID: "list-prices", Method: http.MethodGet, Path: Prefix + "/billing/prices",
		Summary: "The price book", Tags: tags}, read, b.listPrices)
	Register(a, huma.Operation{OperationID: "create-price", Metadata: Audited("billing.price.create"), Method: http.MethodPost,
		Path: Prefix + "/billing/prices", Summary: "Add a price book entry (effective today at the earliest)", Tags: tags,
		DefaultStatus: http.StatusCreated, Errors: []int{400}}, write, b.createPrice)
	Register(a, huma.Operation{OperationID: "update-price", Metadata: Audited("billing.price.update"), Method: http.MethodPut,
		Path: Prefix + "/billing/prices/{id}", Summary: "Change a price book entry (one in effect: only its end)", Tags: tags,
		Errors: []int{400, 404}}, write, b.updatePrice)
	Register(a, huma.Operation{OperationID: "delete-price", Metadata: Audited("billing.price.delete"), Method: http.MethodDelete,
		Path: Prefix + "/billing/prices/{id}", Summary: "Delete a price book entry not yet in effect", Tags: tags,
		DefaultStatus: http.StatusNoContent, Errors: []int{400, 404}}, write, b.deletePrice)
	Register(a, huma.Operation{OperationID: "list-statements", Method: http.MethodGet, Path: Prefix + "/billing/statements",
		Summary: "Closed monthly statements", Tags: tags}, read, b.listStatements)
	Register(a, huma.Operation{OperationID: "get-statement", Method: http.MethodGet, Path: Prefix + "/billing/statements/report",
		Summary: "A closed monthly statement with its report", Tags: tags, Errors: []int{400, 403, 404}}, read, b.getStatement)
	Register(a, huma.Operation{OperationID: "close-statement", Metadata: Audited("billing.statement.close"), Method: http.MethodPost,
		Path: Prefix + "/billing/statements", Summary: "Close a tenant's month: its statement never changes afterwards", Tags: tags,
		DefaultStatus: http.StatusCreated, Errors: []int{400, 404, 409}}, write, b.closeStatement)
	Register(a, huma.Operation{OperationID: "list-budgets", Method: http.MethodGet, Path: Prefix + "/billing/budgets",
		Summary: "Monthly budgets with this month's spend", Tags: tags}, read, b.listBudgets)
	Register(a, huma.Operation{OperationID: "put-budget", Metadata: Audited("billing.budget.put"), Method: http.MethodPut,
		Path: Prefix + "/billing/budgets", Summary: "Set the monthly budget of a tenant or project (alerts at 80 % and 100 %, optional hard stop)",
		Tags: tags, Errors: []int{400}}, write, b.putBudget)
	Register(a, huma.Operation{OperationID: "delete-budget", Metadata: Audited("billing.budget.delete"), Method: http.MethodDelete,
		Path: Prefix + "/billing/budgets/{id}", Summary: "Remove a budget", Tags: tags, DefaultStatus: http.StatusNoContent,
		Errors: []int{404}}, write, b.deleteBudget)
}

// ReportQuery selects a report.
type ReportQuery struct {
	Tenant  string `query:"tenant" maxLength:"128" doc:"Tenant (tenant administrators: always theirs)"`
	Project string `query:"project" maxLength:"128"`
	User    string `query:"user" maxLength:"128" doc:"Owner username (users and viewers: always themselves)"`
	Period  string `query:"period" enum:"day,week,month" default:"month"`
	Start   string `query:"start" doc:"A day of the period, YYYY-MM-DD (default today)"`
	Month   string `query:"month" doc:"Shorthand for period=month: YYYY-MM"`
	Top     int    `query:"top" minimum:"0" maximum:"1000" doc:"Top tasks to list (default 20)"`
}

type reportIn struct {
	ReportQuery
}

type exportIn struct {
	ReportQuery
	Format string `query:"format" enum:"csv,xlsx,json" default:"csv"`
}

type fileOut struct {
	ContentType        string `header:"Content-Type"`
	ContentDisposition string `header:"Content-Disposition"`
	Body               []byte
}

// request turns the query into a scoped ReportRequest.
func (b *billingAPI) request(ctx context.Context, q ReportQuery) (metering.ReportRequest, error) {
	p := PrincipalFrom(ctx)
	req := metering.ReportRequest{Tenant: q.Tenant, Project: q.Project, Period: q.Period, TopTasks: q.Top}
	if req.Period == "" {
		req.Period = metering.PeriodMonth
	}
	switch {
	case q.Month != "":
		m, err := metering.ParseMonth(q.Month)
		if err != nil {
			return req, err
		}
		req.Period, req.Start = metering.PeriodMonth, m
	case q.Start != "":
		d, err := time.Parse(controlplane.DateLayout, q.Start)
		if err != nil {
			return req, controlplane.Invalidf("start must be a date YYYY-MM-DD, not %q", q.Start)
		}
		req.Start = d
	default:
		req.Start = b.a.now()
	}
	switch {
	case p.Role == controlplane.RoleAdmin:
	case p.Role == controlplane.RoleOperator && p.Tenant != "":
		if req.Tenant != "" && req.Tenant != p.Tenant {
			return req, fmt.Errorf("%w: you may see the usage of your tenant %q only", controlplane.ErrForbidden, p.Tenant)
		}
		req.Tenant = p.Tenant
	case p.Role == controlplane.RoleOperator:
	case req.Tenant != "" && p.SeesAllTasksOf(req.Tenant):
		// Tenant admins and tenant viewers see their tenant's usage.
	default:
		if req.Tenant != "" && p.MembershipOf(req.Tenant) == nil {
			return req, tenantForbidden(req.Tenant)
		}
		if q.User != "" && q.User != p.Username {
			return req, fmt.Errorf("%w: you may see your own usage only", controlplane.ErrForbidden)
		}
		req.OwnerID, req.User = p.UserID, p.Username
		return req, nil
	}
	if q.User != "" {
		u, err := b.a.store.GetUserByName(ctx, q.User)
		if err != nil {
			return req, fmt.Errorf("user %q: %w", q.User, err)
		}
		if p.Role == controlplane.RoleOperator && p.Tenant != "" && u.Tenant != p.Tenant {
			return req, fmt.Errorf("user %q: %w", q.User, controlplane.ErrNotFound)
		}
		req.OwnerID, req.User = u.ID, u.Username
	}
	return req, nil
}

func (b *billingAPI) report(ctx context.Context, in *reportIn) (*Body[*metering.UsageReport], error) {
	req, err := b.request(ctx, in.ReportQuery)
	if err != nil {
		return nil, err
	}
	rep, err := b.svc.Report(ctx, req)
	if err != nil {
		return nil, err
	}
	return &Body[*metering.UsageReport]{Body: rep}, nil
}

func (b *billingAPI) export(ctx context.Context, in *exportIn) (*fileOut, error) {
	req, err := b.request(ctx, in.ReportQuery)
	if err != nil {
		return nil, err
	}
	rep, err := b.svc.Report(ctx, req)
	if err != nil {
		return nil, err
	}
	return exportReport(rep, in.Format, "usage")
}

// exportReport writes rep in format as a download.
func exportReport(rep *metering.UsageReport, format, prefix string) (*fileOut, error) {
	var buf bytes.Buffer
	var err error
	switch format {
	case metering.FormatCSV:
		err = rep.WriteCSV(&buf)
	case metering.FormatXLSX:
		err = rep.WriteXLSX(&buf)
	default:
		format = metering.FormatJSON
		err = rep.WriteJSON(&buf)
	}
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("%s-%s-%s.%s", prefix, rep.Period, rep.From, format)
	return &fileOut{ContentType: metering.ContentType(format), ContentDisposition: `attachment; filename="` + name + `"`,
		Body: buf.Bytes()}, nil
}

// PriceJSON is one price book entry on the wire.
type PriceJSON struct {
	ID                    int64   `json:"id,omitempty" readOnly:"true"`
	Vendor                string  `json:"vendor,omitempty" maxLength:"64" doc:"Empty: any vendor"`
	Model                 string  `json:"model,omitempty" maxLength:"128" doc:"Empty: any model"`
	QoS                   string  `json:"qos,omitempty" doc:"gold, silver, bronze; empty: any"`
	EffectiveFrom         string  `json:"effective_from" doc:"First day (YYYY-MM-DD, UTC), today or later"`
	EffectiveTo           string  `json:"effective_to,omitempty" doc:"First day no longer covered; empty: no end"`
	Currency              string  `json:"currency,omitempty" doc:"ISO 4217, default CNY"`
	DeviceHour            float64 `json:"device_hour" doc:"Per device-hour weighted by the slice's share"`
	MemoryGiBHour         float64 `json:"memory_gib_hour,omitempty" doc:"Per GiB-hour of device memory"`
	ComputePercentHour    float64 `json:"compute_percent_hour,omitempty" doc:"Per compute-%-hour"`
	BronzeDiscountPercent float64 `json:"bronze_discount_percent,omitempty" doc:"Off Bronze (preemptible) usage, 0-100"`
	CreatedBy             string  `json:"created_by,omitempty" readOnly:"true"`
	CreatedAt             string  `json:"created_at,omitempty" readOnly:"true"`
	UpdatedAt             string  `json:"updated_at,omitempty" readOnly:"true"`
}

func (p PriceJSON) domain(id int64) (*controlplane.PriceEntry, error) {
	from, err := time.Parse(controlplane.DateLayout, p.EffectiveFrom)
	if err != nil {
		return nil, controlplane.Invalidf("effective_from must be a date YYYY-MM-DD, not %q", p.EffectiveFrom)
	}
	out := &controlplane.PriceEntry{ID: id, Vendor: p.Vendor, Model: p.Model, QoS: controlplane.QoS(p.QoS), From: from,
		Currency: p.Currency, DeviceHour: p.DeviceHour, MemoryGiBHour: p.MemoryGiBHour,
		ComputePercentHour: p.ComputePercentHour, BronzeDiscountPercent: p.BronzeDiscountPercent}
	if p.EffectiveTo != "" {
		to, err := time.Parse(controlplane.DateLayout, p.EffectiveTo)
		if err != nil {
			return nil, controlplane.Invalidf("effective_to must be a date YYYY-MM-DD, not %q", p.EffectiveTo)
		}
		out.To = &to
	}
	return out, nil
}

func priceJSON(p *controlplane.PriceEntry) PriceJSON {
	out := PriceJSON{ID: p.ID, Vendor: p.Vendor, Model: p.Model, QoS: string(p.QoS), EffectiveFrom: p.From.Format(controlplane.DateLayout),
		Currency: p.Currency, DeviceHour: p.DeviceHour, MemoryGiBHour: p.MemoryGiBHour, ComputePercentHour: p.ComputePercentHour,
		BronzeDiscountPercent: p.BronzeDiscountPercent, CreatedBy: p.CreatedBy, CreatedAt: p.CreatedAt.Format(time.RFC3339),
		UpdatedAt: p.UpdatedAt.Format(time.RFC3339)}
	if p.To != nil {
		out.EffectiveTo = p.To.Format(controlplane.DateLayout)
	}
	return out
}

type priceIn struct {
	Body PriceJSON
}

type priceIDIn struct {
	ID int64 `path:"id" minimum:"1"`
}

type putPriceIn struct {
	ID   int64 `path:"id" minimum:"1"`
	Body PriceJSON
}

func priceTarget(id int64) string { return "price/" + strconv.FormatInt(id, 10) }

func (b *billingAPI) listPrices(ctx context.Context, _ *struct{}) (*Body[List[PriceJSON]], error) {
	ps, err := b.svc.ListPrices(ctx)
	if err != nil {
		return nil, err
	}
	p := controlplane.Page{Limit: len(ps)}
	return &Body[List[PriceJSON]]{Body: *newList(ps, len(ps), p, priceJSON)}, nil
}

func (b *billingAPI) createPrice(ctx context.Context, in *priceIn) (*Body[PriceJSON], error) {
	SetAuditModule(ctx, metering.ModuleBilling)
	p, err := in.Body.domain(0)
	if err != nil {
		return nil, err
	}
	SetAuditDetail(ctx, metering.PriceDetail(p))
	if err := b.svc.CreatePrice(ctx, p, PrincipalFrom(ctx).Username); err != nil {
		return nil, err
	}
	SetAudit(ctx, "billing.price.create", priceTarget(p.ID))
	return &Body[PriceJSON]{Body: priceJSON(p)}, nil
}

func (b *billingAPI) updatePrice(ctx context.Context, in *putPriceIn) (*Body[PriceJSON], error) {
	SetAuditModule(ctx, metering.ModuleBilling)
	SetAudit(ctx, "billing.price.update", priceTarget(in.ID))
	p, err := in.Body.domain(in.ID)
	if err != nil {
		return nil, err
	}
	SetAuditDetail(ctx, metering.PriceDetail(p))
	if err := b.svc.UpdatePrice(ctx, p); err != nil {
		return nil, err
	}
	return &Body[PriceJSON]{Body: priceJSON(p)}, nil
}

func (b *billingAPI) deletePrice(ctx context.Context, in *priceIDIn) (*struct{}, error) {
	SetAuditModule(ctx, metering.ModuleBilling)
	SetAudit(ctx, "billing.price.delete", priceTarget(in.ID))
	return nil, b.svc.DeletePrice(ctx, in.ID)
}

// StatementJSON is a closed statement (Report only when one is asked for).
type StatementJSON struct {
	ID       int64                 `json:"id"`
	Tenant   string                `json:"tenant"`
	Month    string                `json:"month"`
	Currency string                `json:"currency"`
	Total    float64               `json:"total"`
	ClosedBy string                `json:"closed_by"`
	ClosedAt string                `json:"closed_at"`
	Report   *metering.UsageReport `json:"report,omitempty"`
}

func statementJSON(s *controlplane.Statement) StatementJSON {
	return StatementJSON{ID: s.ID, Tenant: s.Tenant, Month: s.Month, Currency: s.Currency, Total: s.Total,
		ClosedBy: s.ClosedBy, ClosedAt: s.ClosedAt.Format(time.RFC3339)}
}

type listStatementsIn struct {
	Tenant string `query:"tenant" maxLength:"128"`
}

type getStatementIn struct {
	Tenant string `query:"tenant" required:"true" maxLength:"128"`
	Month  string `query:"month" required:"true" doc:"YYYY-MM"`
	Format string `query:"format" enum:"json,csv,xlsx" default:"json"`
}

type closeStatementIn struct {
	Body struct {
		Tenant string `json:"tenant" minLength:"1" maxLength:"128"`
		Month  string `json:"month" doc:"YYYY-MM, a month that has ended"`
	}
}

// statementTenant is the tenant a caller may read statements of ("" = any).
func statementTenant(ctx context.Context, want string) (string, error) {
	p := PrincipalFrom(ctx)
	switch {
	case p.Role == controlplane.RoleAdmin || (p.Role == controlplane.RoleOperator && p.Tenant == ""):
		return want, nil
	case p.Role == controlplane.RoleOperator && (want == "" || want == p.Tenant):
		return p.Tenant, nil
	}
	return "", fmt.Errorf("%w: statements are for administrators of the tenant", controlplane.ErrForbidden)
}

func (b *billingAPI) listStatements(ctx context.Context, in *listStatementsIn) (*Body[List[StatementJSON]], error) {
	p := PrincipalFrom(ctx)
	if p.Role != controlplane.RoleAdmin && p.Role != controlplane.RoleOperator {
		// Users see their own usage, not their tenant's statements.
		return &Body[List[StatementJSON]]{Body: List[StatementJSON]{Items: []StatementJSON{}}}, nil
	}
	tenant, err := statementTenant(ctx, in.Tenant)
	if err != nil {
		return nil, err
	}
	ss, err := b.svc.ListStatements(ctx, tenant)
	if err != nil {
		return nil, err
	}
	return &Body[List[StatementJSON]]{Body: *newList(ss, len(ss), controlplane.Page{Limit: len(ss)}, statementJSON)}, nil
}

func (b *billingAPI) getStatement(ctx context.Context, in *getStatementIn) (*fileOut, error) {
	tenant, err := statementTenant(ctx, in.Tenant)
	if err != nil {
		return nil, err
	}
	st, rep, err := b.svc.Statement(ctx, tenant, in.Month)
	if err != nil {
		return nil, err
	}
	if in.Format == metering.FormatCSV || in.Format == metering.FormatXLSX {
		return exportReport(rep, in.Format, "statement-"+st.Tenant)
	}
	out := statementJSON(st)
	out.Report = rep
	body, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	return &fileOut{ContentType: "application/json", Body: body}, nil
}

func (b *billingAPI) closeStatement(ctx context.Context, in *closeStatementIn) (*Body[StatementJSON], error) {
	SetAuditModule(ctx, metering.ModuleBilling)
	SetAudit(ctx, "billing.statement.close", "statement/"+in.Body.Tenant+"/"+in.Body.Month)
	st, err := b.svc.CloseStatement(ctx, in.Body.Tenant, in.Body.Month, PrincipalFrom(ctx).Username)
	if err != nil {
		return nil, err
	}
	SetAuditDetail(ctx, fmt.Sprintf("total=%.2f %s", st.Total, st.Currency))
	return &Body[StatementJSON]{Body: statementJSON(st)}, nil
}

// BudgetJSON is a monthly budget on the wire.
type BudgetJSON struct {
	ID       int64   `json:"id,omitempty" readOnly:"true"`
	Tenant   string  `json:"tenant" minLength:"1" maxLength:"128"`
	Project  string  `json:"project,omitempty" maxLength:"128" doc:"Empty: the whole tenant"`
	Amount   float64 `json:"amount" doc:"Per calendar month, in the currency"`
	Currency string  `json:"currency,omitempty" doc:"ISO 4217, default CNY"`
	HardStop string  `json:"hard_stop,omitempty" doc:"Once spent: queue (hold new tasks) or refuse them; empty: alert only"`
	// This month's spend, as of the last check (read only).
	Spent     float64 `json:"spent" readOnly:"true"`
	UsedRatio float64 `json:"used_ratio" readOnly:"true"`
}

type putBudgetIn struct {
	Body BudgetJSON
}

type budgetIDIn struct {
	ID int64 `path:"id" minimum:"1"`
}

func (b *billingAPI) listBudgets(ctx context.Context, _ *struct{}) (*Body[List[BudgetJSON]], error) {
	p := PrincipalFrom(ctx)
	bs, err := b.svc.Budgets(ctx)
	if err != nil {
		return nil, err
	}
	items := []BudgetJSON{}
	for _, st := range bs {
		x := st.Budget
		visible := p.Role == controlplane.RoleAdmin || (p.Role == controlplane.RoleOperator && (p.Tenant == "" || p.Tenant == x.Tenant)) ||
			p.MembershipOf(x.Tenant) != nil // users and viewers see the budgets of their tenants
		if !visible {
			continue
		}
		items = append(items, BudgetJSON{ID: x.ID, Tenant: x.Tenant, Project: x.Project, Amount: x.Amount, Currency: x.Currency,
			HardStop: x.HardStop, Spent: round2(st.Cost), UsedRatio: st.Ratio})
	}
	return &Body[List[BudgetJSON]]{Body: List[BudgetJSON]{Items: items, Total: len(items), Limit: len(items)}}, nil
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }

func (b *billingAPI) putBudget(ctx context.Context, in *putBudgetIn) (*Body[BudgetJSON], error) {
	SetAuditModule(ctx, metering.ModuleBilling)
	x := &controlplane.Budget{Tenant: in.Body.Tenant, Project: in.Body.Project, Amount: in.Body.Amount,
		Currency: in.Body.Currency, HardStop: in.Body.HardStop}
	SetAudit(ctx, "billing.budget.put", "budget/"+x.Tenant+"/"+x.Project)
	SetAuditDetail(ctx, fmt.Sprintf("amount=%g %s hard_stop=%q", x.Amount, x.Currency, x.HardStop))
	if err := b.svc.PutBudget(ctx, x); err != nil {
		return nil, err
	}
	return &Body[BudgetJSON]{Body: BudgetJSON{ID: x.ID, Tenant: x.Tenant, Project: x.Project, Amount: x.Amount,
		Currency: x.Currency, HardStop: x.HardStop}}, nil
}

func (b *billingAPI) deleteBudget(ctx context.Context, in *budgetIDIn) (*struct{}, error) {
	SetAuditModule(ctx, metering.ModuleBilling)
	SetAudit(ctx, "billing.budget.delete", "budget/"+strconv.FormatInt(in.ID, 10))
	return nil, b.svc.DeleteBudget(ctx, in.ID)
}
