package storesql

import (
	"context"
	"fmt"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// Settings, scheduler plugin settings and quotas.

// GetSetting returns the value of key or ErrNotFound.
func (q Queries) GetSetting(ctx context.Context, key string) (string, error) {
	var v string
	if err := q.db.Reader().QueryRow(ctx, `SELECT value FROM settings WHERE key = $1`, key).Scan(&v); err != nil {
		return "", fmt.Errorf("setting %q: %w", key, err)
	}
	return v, nil
}

// PutSetting creates or replaces key.
func (q Queries) PutSetting(ctx context.Context, key, value string) error {
	if err := storeutil.CheckSettingKey(key); err != nil {
		return err
	}
	return q.db.Write(ctx, func(c Conn) error {
		_, err := c.Exec(ctx, `INSERT INTO settings (key, value, updated_at) VALUES ($1, $2, $3)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
			key, value, q.db.Time(q.db.Now()))
		if err != nil {
			return fmt.Errorf("put setting %q: %w", key, err)
		}
		return nil
	})
}

// DeleteSetting removes key (a missing key is not an error).
func (q Queries) DeleteSetting(ctx context.Context, key string) error {
	return q.db.Write(ctx, func(c Conn) error {
		if _, err := c.Exec(ctx, `DELETE FROM settings WHERE key = $1`, key); err != nil {
			return fmt.Errorf("delete setting %q: %w", key, err)
		}
		return nil
	})
}

// ListPluginSettings returns the persisted plugin settings in order.
func (q Queries) ListPluginSettings(ctx context.Context) ([]controlplane.PluginSetting, error) {
	return all(ctx, q.db.Reader(), func(r Row) (controlplane.PluginSetting, error) {
		var p controlplane.PluginSetting
		err := r.Scan(&p.Name, &p.Enabled, &p.Weight, &p.Position)
		return p, err
	}, `SELECT name, enabled, weight, position FROM scheduler_plugins ORDER BY position, `+q.db.Bytewise("name"))
}

// PutPluginSettings replaces the stored settings in one transaction. The
// table lock makes two servers' replacements run one after the other (the
// second wins whole) instead of interleaving into a unique-key clash.
func (q Queries) PutPluginSettings(ctx context.Context, ps []controlplane.PluginSetting) error {
	return q.db.Tx(ctx, func(c Conn) error {
		if err := q.lockTable(ctx, c, "scheduler_plugins", "EXCLUSIVE"); err != nil {
			return err
		}
		if _, err := c.Exec(ctx, `DELETE FROM scheduler_plugins`); err != nil {
			return err
		}
		for _, p := range ps {
			if _, err := c.Exec(ctx, `INSERT INTO scheduler_plugins (name, enabled, weight, position)
				VALUES ($1, $2, $3, $4)`, p.Name, p.Enabled, p.Weight, p.Position); err != nil {
				return err
			}
		}
		return nil
	})
}

// lockTable takes the dialect's table lock in a write transaction, if it
// has one (SQLite's write transaction is exclusive already).
func (q Queries) lockTable(ctx context.Context, c Conn, table, mode string) error {
	s := q.db.LockTable(table, mode)
	if s == "" {
		return nil
	}
	_, err := c.Exec(ctx, s)
	return err
}

const quotaCols = `id, tenant, project, vendor, devices, memory_mib, compute_percent, policy, created_at, updated_at`

func (q Queries) scanQuota(row Row) (*controlplane.Quota, error) {
	var v controlplane.Quota
	if err := row.Scan(&v.ID, &v.Tenant, &v.Project, &v.Vendor, &v.Devices, &v.MemoryMiB, &v.ComputePercent,
		&v.Policy, q.db.ScanTime(&v.CreatedAt), q.db.ScanTime(&v.UpdatedAt)); err != nil {
		return nil, err
	}
	return &v, nil
}

// CreateQuota inserts v; ErrConflict when (tenant, project, vendor) exists.
func (q Queries) CreateQuota(ctx context.Context, v *controlplane.Quota) error {
	if err := v.Validate(); err != nil {
		return err
	}
	now := q.db.Now()
	v.CreatedAt, v.UpdatedAt = now, now
	return q.db.Write(ctx, func(c Conn) error {
		err := c.QueryRow(ctx, `INSERT INTO quotas (tenant, project, vendor, devices, memory_mib,
			compute_percent, policy, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) RETURNING id`,
			v.Tenant, v.Project, v.Vendor, v.Devices, v.MemoryMiB, v.ComputePercent, string(v.Policy), q.db.Time(now)).Scan(&v.ID)
		if err != nil {
			return fmt.Errorf("quota %s/%s/%s: %w", v.Tenant, v.Project, v.Vendor, err)
		}
		return nil
	})
}

// GetQuota returns one quota.
func (q Queries) GetQuota(ctx context.Context, id int64) (*controlplane.Quota, error) {
	v, err := q.scanQuota(q.db.Reader().QueryRow(ctx, `SELECT `+quotaCols+` FROM quotas WHERE id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("quota %d: %w", id, err)
	}
	return v, nil
}

// ListQuotas returns every quota by tenant, project, vendor, ordered bytewise
// in both dialects whatever the database's locale.
func (q Queries) ListQuotas(ctx context.Context) ([]*controlplane.Quota, error) {
	d := q.db
	return all(ctx, d.Reader(), q.scanQuota, `SELECT `+quotaCols+` FROM quotas
		ORDER BY `+d.Bytewise("tenant")+`, `+d.Bytewise("project")+`, `+d.Bytewise("vendor"))
}

// UpdateQuota rewrites v's limits and policy (identity fields included).
func (q Queries) UpdateQuota(ctx context.Context, v *controlplane.Quota) error {
	if err := v.Validate(); err != nil {
		return err
	}
	now := q.db.Now()
	return q.db.Write(ctx, func(c Conn) error {
		n, err := c.Exec(ctx, `UPDATE quotas SET tenant = $1, project = $2, vendor = $3, devices = $4,
			memory_mib = $5, compute_percent = $6, policy = $7, updated_at = $8 WHERE id = $9`, v.Tenant, v.Project,
			v.Vendor, v.Devices, v.MemoryMiB, v.ComputePercent, string(v.Policy), q.db.Time(now), v.ID)
		if err == nil && n > 0 {
			v.UpdatedAt = now
		}
		return affected(n, err, fmt.Sprintf("quota %d", v.ID))
	})
}

// DeleteQuota removes one quota.
func (q Queries) DeleteQuota(ctx context.Context, id int64) error {
	return q.db.Write(ctx, func(c Conn) error {
		n, err := c.Exec(ctx, `DELETE FROM quotas WHERE id = $1`, id)
		return affected(n, err, fmt.Sprintf("quota %d", id))
	})
}
