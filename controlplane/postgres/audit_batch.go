package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// AppendAuditBatch stores entries in one transaction and one round trip
// (httpapi.AuditBatcher): a burst of audited requests costs one commit.
// All or none are stored.
func (db *DB) AppendAuditBatch(ctx context.Context, entries []*controlplane.AuditEntry) error {
	now := db.now()
	for _, e := range entries {
		if err := storeutil.PrepareAudit(e, now); err != nil {
			return err
		}
	}
	return db.tx(ctx, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		for _, e := range entries {
			b.Queue(`INSERT INTO audit_log (at, actor, module, level, action, target, source_ip, result, detail)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`,
				e.At, e.Actor, e.Module, e.Level, e.Action, e.Target, e.SourceIP, e.Result, e.Detail)
		}
		br := tx.SendBatch(ctx, b)
		for _, e := range entries {
			if err := br.QueryRow().Scan(&e.ID); err != nil {
				_ = br.Close()
				return fmt.Errorf("append audit batch: %w", mapErr(err))
			}
		}
		if err := br.Close(); err != nil {
			return fmt.Errorf("append audit batch: %w", mapErr(err))
		}
		return nil
	})
}
