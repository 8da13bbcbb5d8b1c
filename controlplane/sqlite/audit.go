package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

const auditCols = `id, at, actor, module, level, action, target, source_ip, result, detail`

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

// ListAudit returns one page of entries newest first, and the total.
func (db *DB) ListAudit(ctx context.Context, f controlplane.AuditFilter) ([]*controlplane.AuditEntry, int, error) {
	var where []string
	var args []any
	if f.Module != "" {
		where, args = append(where, "module = ?"), append(args, f.Module)
	}
	if f.Level != "" {
		where, args = append(where, "level = ?"), append(args, f.Level)
	}
	if f.Actor != "" {
		where, args = append(where, "actor = ?"), append(args, f.Actor)
	}
	if f.Since != nil {
		where, args = append(where, "at >= ?"), append(args, ts(*f.Since))
	}
	if f.Until != nil {
		where, args = append(where, "at < ?"), append(args, ts(*f.Until))
	}
	if f.Query != "" {
		p := storeutil.ContainsPattern(f.Query)
		where = append(where, `(action LIKE ? ESCAPE '\' OR target LIKE ? ESCAPE '\'
			OR actor LIKE ? ESCAPE '\' OR detail LIKE ? ESCAPE '\')`)
		args = append(args, p, p, p, p)
	}
	out := []*controlplane.AuditEntry{}
	var total int
	err := db.read(ctx, func(tx *sql.Tx) error {
		var err error
		total, err = page(ctx, tx, "audit_log", where, args, "id DESC", f.Page, auditCols, func(rows *sql.Rows) error {
			var e controlplane.AuditEntry
			var at int64
			if err := rows.Scan(&e.ID, &at, &e.Actor, &e.Module, &e.Level, &e.Action, &e.Target,
				&e.SourceIP, &e.Result, &e.Detail); err != nil {
				return mapErr(err)
			}
			e.At = fromTS(at)
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
