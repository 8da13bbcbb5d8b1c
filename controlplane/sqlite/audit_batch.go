package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// AppendAuditBatch stores entries in one transaction (httpapi.AuditBatcher):
// the audit writer drains its queue through it so a burst of requests costs
// one commit, not one per entry. All or none are stored.
func (db *DB) AppendAuditBatch(ctx context.Context, entries []*controlplane.AuditEntry) error {
	now := db.now()
	for _, e := range entries {
		if err := storeutil.PrepareAudit(e, now); err != nil {
			return err
		}
	}
	return db.write(ctx, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO audit_log (at, actor, module, level, action, target,
			source_ip, result, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`)
		if err != nil {
			return fmt.Errorf("append audit batch: %w", mapErr(err))
		}
		defer stmt.Close()
		for _, e := range entries {
			if err := stmt.QueryRowContext(ctx, ts(e.At), e.Actor, e.Module, e.Level, e.Action, e.Target,
				e.SourceIP, e.Result, e.Detail).Scan(&e.ID); err != nil {
				return fmt.Errorf("append audit batch: %w", mapErr(err))
			}
		}
		return nil
	})
}
