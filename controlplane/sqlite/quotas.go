package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/heteroflow/heteroflow/controlplane"
)

const quotaCols = `id, tenant, project, vendor, devices, memory_mib, compute_percent, policy, created_at, updated_at`

func scanQuota(row interface{ Scan(...any) error }) (*controlplane.Quota, error) {
	var q controlplane.Quota
	var created, updated int64
	if err := row.Scan(&q.ID, &q.Tenant, &q.Project, &q.Vendor, &q.Devices, &q.MemoryMiB, &q.ComputePercent,
		&q.Policy, &created, &updated); err != nil {
		return nil, mapErr(err)
	}
	q.CreatedAt, q.UpdatedAt = fromTS(created), fromTS(updated)
	return &q, nil
}

// CreateQuota inserts q; ErrConflict when (tenant, project, vendor) exists.
func (db *DB) CreateQuota(ctx context.Context, q *controlplane.Quota) error {
	if err := q.Validate(); err != nil {
		return err
	}
	now := db.now()
	q.CreatedAt, q.UpdatedAt = now, now
	return db.write(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `INSERT INTO quotas (tenant, project, vendor, devices, memory_mib,
			compute_percent, policy, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			q.Tenant, q.Project, q.Vendor, q.Devices, q.MemoryMiB, q.ComputePercent, q.Policy, ts(now), ts(now)).Scan(&q.ID)
		if err != nil {
			return fmt.Errorf("quota %s/%s/%s: %w", q.Tenant, q.Project, q.Vendor, mapErr(err))
		}
		return nil
	})
}

// GetQuota returns one quota.
func (db *DB) GetQuota(ctx context.Context, id int64) (*controlplane.Quota, error) {
	q, err := scanQuota(db.r.QueryRowContext(ctx, `SELECT `+quotaCols+` FROM quotas WHERE id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("quota %d: %w", id, err)
	}
	return q, nil
}

// ListQuotas returns every quota by tenant, project, vendor.
func (db *DB) ListQuotas(ctx context.Context) ([]*controlplane.Quota, error) {
	return queryAll(ctx, db, scanQuota, `SELECT `+quotaCols+` FROM quotas ORDER BY tenant, project, vendor`)
}

// UpdateQuota rewrites q's limits and policy (identity fields included).
func (db *DB) UpdateQuota(ctx context.Context, q *controlplane.Quota) error {
	if err := q.Validate(); err != nil {
		return err
	}
	now := db.now()
	return db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE quotas SET tenant = ?, project = ?, vendor = ?, devices = ?,
			memory_mib = ?, compute_percent = ?, policy = ?, updated_at = ? WHERE id = ?`, q.Tenant, q.Project,
			q.Vendor, q.Devices, q.MemoryMiB, q.ComputePercent, q.Policy, ts(now), q.ID)
		if err != nil {
			return mapErr(err)
		}
		q.UpdatedAt = now
		return affected(res, fmt.Sprintf("quota %d", q.ID))
	})
}

// DeleteQuota removes one quota.
func (db *DB) DeleteQuota(ctx context.Context, id int64) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM quotas WHERE id = ?`, id)
		if err != nil {
			return mapErr(err)
		}
		return affected(res, fmt.Sprintf("quota %d", id))
	})
}
