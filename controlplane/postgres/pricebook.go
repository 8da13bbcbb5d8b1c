package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

const priceCols = `id, vendor, model, qos, valid_from, valid_to, currency, device_hour, memory_gib_hour,
	compute_percent_hour, bronze_discount, created_by, created_at, updated_at`

func scanPrice(row pgx.Row) (*controlplane.PriceEntry, error) {
	var p controlplane.PriceEntry
	var from, to string
	if err := row.Scan(&p.ID, &p.Vendor, &p.Model, &p.QoS, &from, &to, &p.Currency, &p.DeviceHour, &p.MemoryGiBHour,
		&p.ComputePercentHour, &p.BronzeDiscountPercent, &p.CreatedBy, &p.CreatedAt, &p.UpdatedAt); err != nil {
		return nil, mapErr(err)
	}
	if err := storeutil.ParsePriceDates(&p, from, to); err != nil {
		return nil, err
	}
	p.CreatedAt, p.UpdatedAt = utc(p.CreatedAt), utc(p.UpdatedAt)
	return &p, nil
}

// checkOverlap refuses p when another entry with the same vendor, model
// and QoS covers one of its days. The table lock serialises writers so two
// overlapping entries cannot both pass.
func checkOverlap(ctx context.Context, tx pgx.Tx, p *controlplane.PriceEntry) error {
	if _, err := tx.Exec(ctx, `LOCK TABLE price_book IN SHARE ROW EXCLUSIVE MODE`); err != nil {
		return mapErr(err)
	}
	from, to := storeutil.PriceDates(p)
	var id int64
	err := tx.QueryRow(ctx, `SELECT id FROM price_book WHERE vendor = $1 AND model = $2 AND qos = $3 AND id <> $4
		AND valid_from < $6 AND $5 < valid_to ORDER BY valid_from LIMIT 1`,
		p.Vendor, p.Model, string(p.QoS), p.ID, from, to).Scan(&id)
	if err == nil {
		return storeutil.OverlapError(p, id)
	}
	if err == pgx.ErrNoRows {
		return nil
	}
	return mapErr(err)
}

// CreatePrice: see controlplane.BillingStore.
func (db *DB) CreatePrice(ctx context.Context, p *controlplane.PriceEntry) error {
	if err := p.Validate(); err != nil {
		return err
	}
	now := db.now()
	p.CreatedAt, p.UpdatedAt = now, now
	return db.tx(ctx, func(tx pgx.Tx) error {
		if err := checkOverlap(ctx, tx, p); err != nil {
			return err
		}
		from, to := storeutil.PriceDates(p)
		return mapErr(tx.QueryRow(ctx, `INSERT INTO price_book (vendor, model, qos, valid_from, valid_to, currency,
			device_hour, memory_gib_hour, compute_percent_hour, bronze_discount, created_by, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12) RETURNING id`,
			p.Vendor, p.Model, string(p.QoS), from, to, p.Currency, p.DeviceHour, p.MemoryGiBHour, p.ComputePercentHour,
			p.BronzeDiscountPercent, p.CreatedBy, now).Scan(&p.ID))
	})
}

// GetPrice: see controlplane.BillingStore.
func (db *DB) GetPrice(ctx context.Context, id int64) (*controlplane.PriceEntry, error) {
	p, err := scanPrice(db.pool.QueryRow(ctx, `SELECT `+priceCols+` FROM price_book WHERE id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("price %d: %w", id, err)
	}
	return p, nil
}

// ListPrices: see controlplane.BillingStore; by vendor, model, QoS, date.
func (db *DB) ListPrices(ctx context.Context) ([]*controlplane.PriceEntry, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+priceCols+` FROM price_book
		ORDER BY vendor COLLATE "C", model COLLATE "C", qos COLLATE "C", valid_from, id`)
	return collect(rows, err, scanPrice)
}

// UpdatePrice: see controlplane.BillingStore.
func (db *DB) UpdatePrice(ctx context.Context, p *controlplane.PriceEntry) error {
	if err := p.Validate(); err != nil {
		return err
	}
	p.UpdatedAt = db.now()
	return db.tx(ctx, func(tx pgx.Tx) error {
		if err := checkOverlap(ctx, tx, p); err != nil {
			return err
		}
		from, to := storeutil.PriceDates(p)
		tag, err := tx.Exec(ctx, `UPDATE price_book SET vendor = $2, model = $3, qos = $4, valid_from = $5,
			valid_to = $6, currency = $7, device_hour = $8, memory_gib_hour = $9, compute_percent_hour = $10,
			bronze_discount = $11, updated_at = $12 WHERE id = $1`,
			p.ID, p.Vendor, p.Model, string(p.QoS), from, to, p.Currency, p.DeviceHour, p.MemoryGiBHour,
			p.ComputePercentHour, p.BronzeDiscountPercent, p.UpdatedAt)
		if err != nil {
			return mapErr(err)
		}
		return affected(tag, fmt.Sprintf("price %d", p.ID))
	})
}

// DeletePrice: see controlplane.BillingStore.
func (db *DB) DeletePrice(ctx context.Context, id int64) error {
	tag, err := db.pool.Exec(ctx, `DELETE FROM price_book WHERE id = $1`, id)
	if err != nil {
		return mapErr(err)
	}
	return affected(tag, fmt.Sprintf("price %d", id))
}

const statementCols = `id, tenant, month, currency, total, report, closed_by, closed_at`

func scanStatement(row pgx.Row) (*controlplane.Statement, error) {
	var s controlplane.Statement
	var report []byte
	if err := row.Scan(&s.ID, &s.Tenant, &s.Month, &s.Currency, &s.Total, &report, &s.ClosedBy, &s.ClosedAt); err != nil {
		return nil, mapErr(err)
	}
	s.Report, s.ClosedAt = json.RawMessage(report), utc(s.ClosedAt)
	return &s, nil
}

// CreateStatement: see controlplane.BillingStore.
func (db *DB) CreateStatement(ctx context.Context, s *controlplane.Statement) error {
	s.ClosedAt = db.now()
	err := db.pool.QueryRow(ctx, `INSERT INTO billing_statements (tenant, month, currency, total, report, closed_by,
		closed_at) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
		s.Tenant, s.Month, s.Currency, s.Total, string(s.Report), s.ClosedBy, s.ClosedAt).Scan(&s.ID)
	if err != nil {
		return fmt.Errorf("statement %s %s: %w", s.Tenant, s.Month, mapErr(err))
	}
	return nil
}

// GetStatement: see controlplane.BillingStore.
func (db *DB) GetStatement(ctx context.Context, tenant, month string) (*controlplane.Statement, error) {
	s, err := scanStatement(db.pool.QueryRow(ctx, `SELECT `+statementCols+` FROM billing_statements
		WHERE tenant = $1 AND month = $2`, tenant, month))
	if err != nil {
		return nil, fmt.Errorf("statement %s %s: %w", tenant, month, err)
	}
	return s, nil
}

// ListStatements: see controlplane.BillingStore ("" = every tenant).
func (db *DB) ListStatements(ctx context.Context, tenant string) ([]*controlplane.Statement, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+statementCols+` FROM billing_statements
		WHERE $1 = '' OR tenant = $1 ORDER BY month DESC, tenant COLLATE "C"`, tenant)
	return collect(rows, err, scanStatement)
}

const budgetCols = `id, tenant, project, amount, currency, hard_stop, created_at, updated_at`

func scanBudget(row pgx.Row) (*controlplane.Budget, error) {
	var b controlplane.Budget
	if err := row.Scan(&b.ID, &b.Tenant, &b.Project, &b.Amount, &b.Currency, &b.HardStop, &b.CreatedAt, &b.UpdatedAt); err != nil {
		return nil, mapErr(err)
	}
	b.CreatedAt, b.UpdatedAt = utc(b.CreatedAt), utc(b.UpdatedAt)
	return &b, nil
}

// PutBudget: see controlplane.BillingStore; it replaces the budget of the
// same tenant and project.
func (db *DB) PutBudget(ctx context.Context, b *controlplane.Budget) error {
	if err := b.Validate(); err != nil {
		return err
	}
	now := db.now()
	return mapErr(db.pool.QueryRow(ctx, `INSERT INTO budgets (tenant, project, amount, currency, hard_stop,
		created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $6)
		ON CONFLICT (tenant, project) DO UPDATE SET amount = EXCLUDED.amount, currency = EXCLUDED.currency,
		hard_stop = EXCLUDED.hard_stop, updated_at = EXCLUDED.updated_at RETURNING id, created_at, updated_at`,
		b.Tenant, b.Project, b.Amount, b.Currency, b.HardStop, now).Scan(&b.ID, &b.CreatedAt, &b.UpdatedAt))
}

// ListBudgets: see controlplane.BillingStore.
func (db *DB) ListBudgets(ctx context.Context) ([]*controlplane.Budget, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+budgetCols+` FROM budgets ORDER BY tenant COLLATE "C", project COLLATE "C"`)
	return collect(rows, err, scanBudget)
}

// DeleteBudget: see controlplane.BillingStore.
func (db *DB) DeleteBudget(ctx context.Context, id int64) error {
	tag, err := db.pool.Exec(ctx, `DELETE FROM budgets WHERE id = $1`, id)
	if err != nil {
		return mapErr(err)
	}
	return affected(tag, fmt.Sprintf("budget %d", id))
}
