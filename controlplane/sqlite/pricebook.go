package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

const priceCols = `id, vendor, model, qos, valid_from, valid_to, currency, device_hour, memory_gib_hour,
	compute_percent_hour, bronze_discount, created_by, created_at, updated_at`

func scanPrice(row rowScanner) (*controlplane.PriceEntry, error) {
	var p controlplane.PriceEntry
	var from, to string
	var created, updated int64
	if err := row.Scan(&p.ID, &p.Vendor, &p.Model, &p.QoS, &from, &to, &p.Currency, &p.DeviceHour, &p.MemoryGiBHour,
		&p.ComputePercentHour, &p.BronzeDiscountPercent, &p.CreatedBy, &created, &updated); err != nil {
		return nil, mapErr(err)
	}
	if err := storeutil.ParsePriceDates(&p, from, to); err != nil {
		return nil, err
	}
	p.CreatedAt, p.UpdatedAt = fromTS(created), fromTS(updated)
	return &p, nil
}

// checkOverlap refuses p when another entry with the same vendor, model
// and QoS covers one of its days (the writer transaction is exclusive).
func checkOverlap(ctx context.Context, tx *sql.Tx, p *controlplane.PriceEntry) error {
	from, to := storeutil.PriceDates(p)
	var id int64
	err := tx.QueryRowContext(ctx, `SELECT id FROM price_book WHERE vendor = ? AND model = ? AND qos = ? AND id <> ?
		AND valid_from < ? AND ? < valid_to ORDER BY valid_from LIMIT 1`,
		p.Vendor, p.Model, string(p.QoS), p.ID, to, from).Scan(&id)
	if err == nil {
		return storeutil.OverlapError(p, id)
	}
	if errors.Is(err, sql.ErrNoRows) {
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
	return db.write(ctx, func(tx *sql.Tx) error {
		if err := checkOverlap(ctx, tx, p); err != nil {
			return err
		}
		from, to := storeutil.PriceDates(p)
		return mapErr(tx.QueryRowContext(ctx, `INSERT INTO price_book (vendor, model, qos, valid_from, valid_to,
			currency, device_hour, memory_gib_hour, compute_percent_hour, bronze_discount, created_by, created_at,
			updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			p.Vendor, p.Model, string(p.QoS), from, to, p.Currency, p.DeviceHour, p.MemoryGiBHour, p.ComputePercentHour,
			p.BronzeDiscountPercent, p.CreatedBy, ts(now), ts(now)).Scan(&p.ID))
	})
}

// GetPrice: see controlplane.BillingStore.
func (db *DB) GetPrice(ctx context.Context, id int64) (*controlplane.PriceEntry, error) {
	p, err := scanPrice(db.r.QueryRowContext(ctx, `SELECT `+priceCols+` FROM price_book WHERE id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("price %d: %w", id, err)
	}
	return p, nil
}

// ListPrices: see controlplane.BillingStore; by vendor, model, QoS, date.
func (db *DB) ListPrices(ctx context.Context) ([]*controlplane.PriceEntry, error) {
	return queryAll(ctx, db, scanPrice, `SELECT `+priceCols+` FROM price_book ORDER BY vendor, model, qos, valid_from, id`)
}

// UpdatePrice: see controlplane.BillingStore.
func (db *DB) UpdatePrice(ctx context.Context, p *controlplane.PriceEntry) error {
	if err := p.Validate(); err != nil {
		return err
	}
	p.UpdatedAt = db.now()
	return db.write(ctx, func(tx *sql.Tx) error {
		if err := checkOverlap(ctx, tx, p); err != nil {
			return err
		}
		from, to := storeutil.PriceDates(p)
		res, err := tx.ExecContext(ctx, `UPDATE price_book SET vendor = ?, model = ?, qos = ?, valid_from = ?,
			valid_to = ?, currency = ?, device_hour = ?, memory_gib_hour = ?, compute_percent_hour = ?,
			bronze_discount = ?, updated_at = ? WHERE id = ?`,
			p.Vendor, p.Model, string(p.QoS), from, to, p.Currency, p.DeviceHour, p.MemoryGiBHour,
			p.ComputePercentHour, p.BronzeDiscountPercent, ts(p.UpdatedAt), p.ID)
		if err != nil {
			return mapErr(err)
		}
		return affected(res, fmt.Sprintf("price %d", p.ID))
	})
}

// DeletePrice: see controlplane.BillingStore.
func (db *DB) DeletePrice(ctx context.Context, id int64) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM price_book WHERE id = ?`, id)
		if err != nil {
			return mapErr(err)
		}
		return affected(res, fmt.Sprintf("price %d", id))
	})
}

const statementCols = `id, tenant, month, currency, total, report, closed_by, closed_at`

func scanStatement(row rowScanner) (*controlplane.Statement, error) {
	var s controlplane.Statement
	var report string
	var closed int64
	if err := row.Scan(&s.ID, &s.Tenant, &s.Month, &s.Currency, &s.Total, &report, &s.ClosedBy, &closed); err != nil {
		return nil, mapErr(err)
	}
	s.Report, s.ClosedAt = []byte(report), fromTS(closed)
	return &s, nil
}

// CreateStatement: see controlplane.BillingStore.
func (db *DB) CreateStatement(ctx context.Context, s *controlplane.Statement) error {
	s.ClosedAt = db.now()
	return db.write(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `INSERT INTO billing_statements (tenant, month, currency, total, report,
			closed_by, closed_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			s.Tenant, s.Month, s.Currency, s.Total, string(s.Report), s.ClosedBy, ts(s.ClosedAt)).Scan(&s.ID)
		if err != nil {
			return fmt.Errorf("statement %s %s: %w", s.Tenant, s.Month, mapErr(err))
		}
		return nil
	})
}

// GetStatement: see controlplane.BillingStore.
func (db *DB) GetStatement(ctx context.Context, tenant, month string) (*controlplane.Statement, error) {
	s, err := scanStatement(db.r.QueryRowContext(ctx, `SELECT `+statementCols+` FROM billing_statements
		WHERE tenant = ? AND month = ?`, tenant, month))
	if err != nil {
		return nil, fmt.Errorf("statement %s %s: %w", tenant, month, err)
	}
	return s, nil
}

// ListStatements: see controlplane.BillingStore ("" = every tenant).
func (db *DB) ListStatements(ctx context.Context, tenant string) ([]*controlplane.Statement, error) {
	return queryAll(ctx, db, scanStatement, `SELECT `+statementCols+` FROM billing_statements
		WHERE ?1 = '' OR tenant = ?1 ORDER BY month DESC, tenant`, tenant)
}

const budgetCols = `id, tenant, project, amount, currency, hard_stop, created_at, updated_at`

func scanBudget(row rowScanner) (*controlplane.Budget, error) {
	var b controlplane.Budget
	var created, updated int64
	if err := row.Scan(&b.ID, &b.Tenant, &b.Project, &b.Amount, &b.Currency, &b.HardStop, &created, &updated); err != nil {
		return nil, mapErr(err)
	}
	b.CreatedAt, b.UpdatedAt = fromTS(created), fromTS(updated)
	return &b, nil
}

// PutBudget: see controlplane.BillingStore; it replaces the budget of the
// same tenant and project.
func (db *DB) PutBudget(ctx context.Context, b *controlplane.Budget) error {
	if err := b.Validate(); err != nil {
		return err
	}
	now := db.now()
	return db.write(ctx, func(tx *sql.Tx) error {
		var created, updated int64
		err := tx.QueryRowContext(ctx, `INSERT INTO budgets (tenant, project, amount, currency, hard_stop,
			created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (tenant, project) DO UPDATE SET amount = excluded.amount, currency = excluded.currency,
			hard_stop = excluded.hard_stop, updated_at = excluded.updated_at RETURNING id, created_at, updated_at`,
			b.Tenant, b.Project, b.Amount, b.Currency, b.HardStop, ts(now), ts(now)).Scan(&b.ID, &created, &updated)
		b.CreatedAt, b.UpdatedAt = fromTS(created), fromTS(updated)
		return mapErr(err)
	})
}

// ListBudgets: see controlplane.BillingStore.
func (db *DB) ListBudgets(ctx context.Context) ([]*controlplane.Budget, error) {
	return queryAll(ctx, db, scanBudget, `SELECT `+budgetCols+` FROM budgets ORDER BY tenant, project`)
}

// DeleteBudget: see controlplane.BillingStore.
func (db *DB) DeleteBudget(ctx context.Context, id int64) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM budgets WHERE id = ?`, id)
		if err != nil {
			return mapErr(err)
		}
		return affected(res, fmt.Sprintf("budget %d", id))
	})
}
