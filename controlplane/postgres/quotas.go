package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/heteroflow/heteroflow/controlplane"
)

const quotaCols = `id, tenant, project, vendor, devices, memory_mib, compute_percent, policy, created_at, updated_at`

func scanQuota(row pgx.Row) (*controlplane.Quota, error) {
	var q controlplane.Quota
	if err := row.Scan(&q.ID, &q.Tenant, &q.Project, &q.Vendor, &q.Devices, &q.MemoryMiB, &q.ComputePercent,
		&q.Policy, &q.CreatedAt, &q.UpdatedAt); err != nil {
		return nil, mapErr(err)
	}
	q.CreatedAt, q.UpdatedAt = utc(q.CreatedAt), utc(q.UpdatedAt)
	return &q, nil
}

// CreateQuota inserts q; ErrConflict when (tenant, project, vendor) exists.
func (db *DB) CreateQuota(ctx context.Context, q *controlplane.Quota) error {
	if err := q.Validate(); err != nil {
		return err
	}
	now := db.now()
	q.CreatedAt, q.UpdatedAt = now, now
	err := db.pool.QueryRow(ctx, `INSERT INTO quotas (tenant, project, vendor, devices, memory_mib,
		compute_percent, policy, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) RETURNING id`,
		q.Tenant, q.Project, q.Vendor, q.Devices, q.MemoryMiB, q.ComputePercent, string(q.Policy), now).Scan(&q.ID)
	if err != nil {
		return fmt.Errorf("quota %s/%s/%s: %w", q.Tenant, q.Project, q.Vendor, mapErr(err))
	}
	return nil
}

// GetQuota returns one quota.
func (db *DB) GetQuota(ctx context.Context, id int64) (*controlplane.Quota, error) {
	q, err := scanQuota(db.pool.QueryRow(ctx, `SELECT `+quotaCols+` FROM quotas WHERE id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("quota %d: %w", id, err)
	}
	return q, nil
}

// ListQuotas returns every quota by tenant, project, vendor. COLLATE "C"
// orders bytewise, as SQLite does, whatever the database's locale.
func (db *DB) ListQuotas(ctx context.Context) ([]*controlplane.Quota, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+quotaCols+` FROM quotas
		ORDER BY tenant COLLATE "C", project COLLATE "C", vendor COLLATE "C"`)
	if err != nil {
		return nil, mapErr(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*controlplane.Quota, error) { return scanQuota(r) })
	return out, mapErr(err)
}

// UpdateQuota rewrites q's limits and policy (identity fields included).
func (db *DB) UpdateQuota(ctx context.Context, q *controlplane.Quota) error {
	if err := q.Validate(); err != nil {
		return err
	}
	now := db.now()
	tag, err := db.pool.Exec(ctx, `UPDATE quotas SET tenant = $1, project = $2, vendor = $3, devices = $4,
		memory_mib = $5, compute_percent = $6, policy = $7, updated_at = $8 WHERE id = $9`, q.Tenant, q.Project,
		q.Vendor, q.Devices, q.MemoryMiB, q.ComputePercent, string(q.Policy), now, q.ID)
	if err != nil {
		return fmt.Errorf("quota %d: %w", q.ID, mapErr(err))
	}
	q.UpdatedAt = now
	return affected(tag, fmt.Sprintf("quota %d", q.ID))
}

// DeleteQuota removes one quota.
func (db *DB) DeleteQuota(ctx context.Context, id int64) error {
	tag, err := db.pool.Exec(ctx, `DELETE FROM quotas WHERE id = $1`, id)
	if err != nil {
		return mapErr(err)
	}
	return affected(tag, fmt.Sprintf("quota %d", id))
}
