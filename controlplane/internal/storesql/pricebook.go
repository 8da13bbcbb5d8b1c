package storesql

import (
	"context"
	"errors"
	"fmt"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// The price book, monthly statements and budgets.

const priceCols = `id, vendor, model, qos, valid_from, valid_to, currency, device_hour, memory_gib_hour,
	compute_percent_hour, bronze_discount, created_by, created_at, updated_at`

func (q Queries) scanPrice(row Row) (*controlplane.PriceEntry, error) {
	var p controlplane.PriceEntry
	var from, to string
	if err := row.Scan(&p.ID, &p.Vendor, &p.Model, &p.QoS, &from, &to, &p.Currency, &p.DeviceHour, &p.MemoryGiBHour,
		&p.ComputePercentHour, &p.BronzeDiscountPercent, &p.CreatedBy, q.db.ScanTime(&p.CreatedAt),
		q.db.ScanTime(&p.UpdatedAt)); err != nil {
		return nil, err
	}
	if err := storeutil.ParsePriceDates(&p, from, to); err != nil {
		return nil, err
	}
	return &p, nil
}

// checkOverlap refuses p when another entry with the same vendor, model
// and QoS covers one of its days. The table lock (PostgreSQL; SQLite's
// write transaction is exclusive) serialises writers so two overlapping
// entries cannot both pass.
func (q Queries) checkOverlap(ctx context.Context, c Conn, p *controlplane.PriceEntry) error {
	if err := q.lockTable(ctx, c, "price_book", "SHARE ROW EXCLUSIVE"); err != nil {
		return err
	}
	from, to := storeutil.PriceDates(p)
	var id int64
	err := c.QueryRow(ctx, `SELECT id FROM price_book WHERE vendor = $1 AND model = $2 AND qos = $3 AND id <> $4
		AND valid_from < $6 AND $5 < valid_to ORDER BY valid_from LIMIT 1`,
		p.Vendor, p.Model, string(p.QoS), p.ID, from, to).Scan(&id)
	if err == nil {
		return storeutil.OverlapError(p, id)
	}
	if errors.Is(err, controlplane.ErrNotFound) {
		return nil
	}
	return err
}

// CreatePrice: see controlplane.BillingStore.
func (q Queries) CreatePrice(ctx context.Context, p *controlplane.PriceEntry) error {
	if err := p.Validate(); err != nil {
		return err
	}
	now := q.db.Now()
	p.CreatedAt, p.UpdatedAt = now, now
	return q.db.Tx(ctx, func(c Conn) error {
		if err := q.checkOverlap(ctx, c, p); err != nil {
			return err
		}
		from, to := storeutil.PriceDates(p)
		return c.QueryRow(ctx, `INSERT INTO price_book (vendor, model, qos, valid_from, valid_to, currency,
			device_hour, memory_gib_hour, compute_percent_hour, bronze_discount, created_by, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12) RETURNING id`,
			p.Vendor, p.Model, string(p.QoS), from, to, p.Currency, p.DeviceHour, p.MemoryGiBHour, p.ComputePercentHour,
			p.BronzeDiscountPercent, p.CreatedBy, q.db.Time(now)).Scan(&p.ID)
	})
}

// GetPrice: see controlplane.BillingStore.
func (q Queries) GetPrice(ctx context.Context, id int64) (*controlplane.PriceEntry, error) {
	p, err := q.scanPrice(q.db.Reader().QueryRow(ctx, `SELECT `+priceCols+` FROM price_book WHERE id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("price %d: %w", id, err)
	}
	return p, nil
}

// ListPrices: see controlplane.BillingStore; by vendor, model, QoS, date.
func (q Queries) ListPrices(ctx context.Context) ([]*controlplane.PriceEntry, error) {
	d := q.db
	return all(ctx, d.Reader(), q.scanPrice, `SELECT `+priceCols+` FROM price_book
		ORDER BY `+d.Bytewise("vendor")+`, `+d.Bytewise("model")+`, `+d.Bytewise("qos")+`, valid_from, id`)
}

// UpdatePrice: see controlplane.BillingStore.
func (q Queries) UpdatePrice(ctx context.Context, p *controlplane.PriceEntry) error {
	if err := p.Validate(); err != nil {
		return err
	}
	p.UpdatedAt = q.db.Now()
	return q.db.Tx(ctx, func(c Conn) error {
		if err := q.checkOverlap(ctx, c, p); err != nil {
			return err
		}
		from, to := storeutil.PriceDates(p)
		n, err := c.Exec(ctx, `UPDATE price_book SET vendor = $2, model = $3, qos = $4, valid_from = $5,
			valid_to = $6, currency = $7, device_hour = $8, memory_gib_hour = $9, compute_percent_hour = $10,
			bronze_discount = $11, updated_at = $12 WHERE id = $1`,
			p.ID, p.Vendor, p.Model, string(p.QoS), from, to, p.Currency, p.DeviceHour, p.MemoryGiBHour,
			p.ComputePercentHour, p.BronzeDiscountPercent, q.db.Time(p.UpdatedAt))
		return affected(n, err, fmt.Sprintf("price %d", p.ID))
	})
}

// DeletePrice: see controlplane.BillingStore.
func (q Queries) DeletePrice(ctx context.Context, id int64) error {
	return q.db.Write(ctx, func(c Conn) error {
		n, err := c.Exec(ctx, `DELETE FROM price_book WHERE id = $1`, id)
		return affected(n, err, fmt.Sprintf("price %d", id))
	})
}

const statementCols = `id, tenant, month, currency, total, report, closed_by, closed_at`

func (q Queries) scanStatement(row Row) (*controlplane.Statement, error) {
	var s controlplane.Statement
	var report []byte
	if err := row.Scan(&s.ID, &s.Tenant, &s.Month, &s.Currency, &s.Total, &report, &s.ClosedBy,
		q.db.ScanTime(&s.ClosedAt)); err != nil {
		return nil, err
	}
	s.Report = report
	return &s, nil
}

// CreateStatement: see controlplane.BillingStore.
func (q Queries) CreateStatement(ctx context.Context, s *controlplane.Statement) error {
	s.ClosedAt = q.db.Now()
	return q.db.Write(ctx, func(c Conn) error {
		err := c.QueryRow(ctx, `INSERT INTO billing_statements (tenant, month, currency, total, report, closed_by,
			closed_at) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
			s.Tenant, s.Month, s.Currency, s.Total, string(s.Report), s.ClosedBy, q.db.Time(s.ClosedAt)).Scan(&s.ID)
		if err != nil {
			return fmt.Errorf("statement %s %s: %w", s.Tenant, s.Month, err)
		}
		return nil
	})
}

// GetStatement: see controlplane.BillingStore.
func (q Queries) GetStatement(ctx context.Context, tenant, month string) (*controlplane.Statement, error) {
	s, err := q.scanStatement(q.db.Reader().QueryRow(ctx, `SELECT `+statementCols+` FROM billing_statements
		WHERE tenant = $1 AND month = $2`, tenant, month))
	if err != nil {
		return nil, fmt.Errorf("statement %s %s: %w", tenant, month, err)
	}
	return s, nil
}

// ListStatements: see controlplane.BillingStore ("" = every tenant).
func (q Queries) ListStatements(ctx context.Context, tenant string) ([]*controlplane.Statement, error) {
	return all(ctx, q.db.Reader(), q.scanStatement, `SELECT `+statementCols+` FROM billing_statements
		WHERE $1 = '' OR tenant = $1 ORDER BY month DESC, `+q.db.Bytewise("tenant"), tenant)
}

const budgetCols = `id, tenant, project, amount, currency, hard_stop, created_at, updated_at`

func (q Queries) scanBudget(row Row) (*controlplane.Budget, error) {
	var b controlplane.Budget
	if err := row.Scan(&b.ID, &b.Tenant, &b.Project, &b.Amount, &b.Currency, &b.HardStop,
		q.db.ScanTime(&b.CreatedAt), q.db.ScanTime(&b.UpdatedAt)); err != nil {
		return nil, err
	}
	return &b, nil
}

// PutBudget: see controlplane.BillingStore; it replaces the budget of the
// same tenant and project.
func (q Queries) PutBudget(ctx context.Context, b *controlplane.Budget) error {
	if err := b.Validate(); err != nil {
		return err
	}
	now := q.db.Now()
	return q.db.Write(ctx, func(c Conn) error {
		return c.QueryRow(ctx, `INSERT INTO budgets (tenant, project, amount, currency, hard_stop,
			created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $6)
			ON CONFLICT (tenant, project) DO UPDATE SET amount = excluded.amount, currency = excluded.currency,
			hard_stop = excluded.hard_stop, updated_at = excluded.updated_at RETURNING id, created_at, updated_at`,
			b.Tenant, b.Project, b.Amount, b.Currency, b.HardStop, q.db.Time(now)).
			Scan(&b.ID, q.db.ScanTime(&b.CreatedAt), q.db.ScanTime(&b.UpdatedAt))
	})
}

// ListBudgets: see controlplane.BillingStore.
func (q Queries) ListBudgets(ctx context.Context) ([]*controlplane.Budget, error) {
	d := q.db
	return all(ctx, d.Reader(), q.scanBudget, `SELECT `+budgetCols+` FROM budgets
		ORDER BY `+d.Bytewise("tenant")+`, `+d.Bytewise("project"))
}

// DeleteBudget: see controlplane.BillingStore.
func (q Queries) DeleteBudget(ctx context.Context, id int64) error {
	return q.db.Write(ctx, func(c Conn) error {
		n, err := c.Exec(ctx, `DELETE FROM budgets WHERE id = $1`, id)
		return affected(n, err, fmt.Sprintf("budget %d", id))
	})
}

// TenantKnown: see controlplane.BillingStore.
func (q Queries) TenantKnown(ctx context.Context, tenant string) (bool, error) {
	var ok bool
	err := q.db.Reader().QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM users WHERE tenant = $1)
		OR EXISTS (SELECT 1 FROM tasks WHERE tenant = $1) OR EXISTS (SELECT 1 FROM quotas WHERE tenant = $1)
		OR EXISTS (SELECT 1 FROM usage_records WHERE tenant = $1) OR EXISTS (SELECT 1 FROM budgets WHERE tenant = $1)
		OR EXISTS (SELECT 1 FROM tenants WHERE name = $1)`,
		tenant).Scan(&ok)
	return ok, err
}
