package sqlite

import (
	"context"
	"database/sql"

	"github.com/heteroflow/heteroflow/controlplane"
)

// ListPluginSettings returns the persisted plugin settings in order.
func (db *DB) ListPluginSettings(ctx context.Context) ([]controlplane.PluginSetting, error) {
	var out []controlplane.PluginSetting
	err := db.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT name, enabled, weight, position FROM scheduler_plugins ORDER BY position, name`)
		if err != nil {
			return mapErr(err)
		}
		defer rows.Close()
		for rows.Next() {
			var p controlplane.PluginSetting
			if err := rows.Scan(&p.Name, &p.Enabled, &p.Weight, &p.Position); err != nil {
				return mapErr(err)
			}
			out = append(out, p)
		}
		return mapErr(rows.Err())
	})
	return out, err
}

// PutPluginSettings replaces the stored settings in one transaction.
func (db *DB) PutPluginSettings(ctx context.Context, ps []controlplane.PluginSetting) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM scheduler_plugins`); err != nil {
			return mapErr(err)
		}
		for _, p := range ps {
			if _, err := tx.ExecContext(ctx, `INSERT INTO scheduler_plugins (name, enabled, weight, position)
				VALUES (?, ?, ?, ?)`, p.Name, p.Enabled, p.Weight, p.Position); err != nil {
				return mapErr(err)
			}
		}
		return nil
	})
}
