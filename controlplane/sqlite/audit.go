package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// AppendAudit stores e and sets its ID; a zero At is set to now.
func (db *DB) AppendAudit(ctx context.Context, e *controlplane.AuditEntry) error {
	if err := storeutil.PrepareAudit(e, db.now()); err != nil {
		return err
	}
	return db.write(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `INSERT INTO audit_log (at, actor, module, level, action, target,
			source_ip, result, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			ts(e.At), e.Actor, e.Module, e.Level, e.Action, e.Target, e.SourceIP, e.Result, e.Detail).Scan(&e.ID)
		if err != nil {
			return fmt.Errorf("append audit: %w", mapErr(err))
		}
		return nil
	})
}
