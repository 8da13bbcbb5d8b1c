package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/heteroflow/heteroflow/controlplane"
)

// ListPluginSettings returns the persisted plugin settings in order.
func (db *DB) ListPluginSettings(ctx context.Context) ([]controlplane.PluginSetting, error) {
	rows, err := db.pool.Query(ctx, `SELECT name, enabled, weight, position FROM scheduler_plugins
		ORDER BY position, name COLLATE "C"`)
	if err != nil {
		return nil, mapErr(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (controlplane.PluginSetting, error) {
		var p controlplane.PluginSetting
		err := r.Scan(&p.Name, &p.Enabled, &p.Weight, &p.Position)
		return p, err
	})
	return out, mapErr(err)
}

// PutPluginSettings replaces the stored settings in one transaction. The
// table lock makes two servers' replacements run one after the other (the
// second wins whole) instead of interleaving into a unique-key clash.
func (db *DB) PutPluginSettings(ctx context.Context, ps []controlplane.PluginSetting) error {
	return db.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `LOCK TABLE scheduler_plugins IN EXCLUSIVE MODE`); err != nil {
			return mapErr(err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM scheduler_plugins`); err != nil {
			return mapErr(err)
		}
		for _, p := range ps {
			if _, err := tx.Exec(ctx, `INSERT INTO scheduler_plugins (name, enabled, weight, position)
				VALUES ($1, $2, $3, $4)`, p.Name, p.Enabled, p.Weight, p.Position); err != nil {
				return mapErr(err)
			}
		}
		return nil
	})
}
