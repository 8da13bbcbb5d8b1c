package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

const auditCols = `id, at, actor, module, level, action, target, source_ip, result, detail`

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

// ListAudit returns one page of entries newest first, and the total.
func (db *DB) ListAudit(ctx context.Context, f controlplane.AuditFilter) ([]*controlplane.AuditEntry, int, error) {
	var where []string
	var a args
	if f.Module != "" {
		where = append(where, "module = "+a.add(f.Module))
	}
	if f.Level != "" {
		where = append(where, "level = "+a.add(f.Level))
	}
	if f.Actor != "" {
		where = append(where, "actor = "+a.add(f.Actor))
	}
	if f.Since != nil {
		where = append(where, "at >= "+a.add(*f.Since))
	}
	if f.Until != nil {
		where = append(where, "at < "+a.add(*f.Until))
	}
	if f.Query != "" {
		p := a.add(storeutil.ContainsPattern(f.Query))
		where = append(where, fmt.Sprintf(`(action ILIKE %[1]s ESCAPE '\' OR target ILIKE %[1]s ESCAPE '\'
			OR actor ILIKE %[1]s ESCAPE '\' OR detail ILIKE %[1]s ESCAPE '\')`, p))
	}
	out := []*controlplane.AuditEntry{}
	var total int
	err := db.readTx(ctx, func(tx pgx.Tx) error {
		var err error
		total, err = page(ctx, tx, "audit_log", where, a, "id DESC", f.Page, auditCols, func(rows pgx.Rows) error {
			var e controlplane.AuditEntry
			if err := rows.Scan(&e.ID, &e.At, &e.Actor, &e.Module, &e.Level, &e.Action, &e.Target,
				&e.SourceIP, &e.Result, &e.Detail); err != nil {
				return mapErr(err)
			}
			e.At = utc(e.At)
			out = append(out, &e)
			return nil
		})
		return err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("list audit: %w", err)
	}
	return out, total, nil
}
