package postgres

import (
	"context"
	"fmt"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// AppendAudit stores e and sets its ID; a zero At is set to now. Like
// AppendAuditBatch it rides on the hot path's group commit (writes.go), so
// an audited request costs no WAL flush of its own.
func (db *DB) AppendAudit(ctx context.Context, e *controlplane.AuditEntry) error {
	if err := storeutil.PrepareAudit(e, db.now()); err != nil {
		return err
	}
	if err := db.writes.Do(ctx, writeUnit{audit: []*controlplane.AuditEntry{e}}); err != nil {
		return fmt.Errorf("append audit: %w", err)
	}
	return nil
}
