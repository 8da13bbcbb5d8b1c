package storesql

import (
	"context"
	"fmt"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// The audit log's reads. Appending stays in each store: PostgreSQL folds
// entries into its group-commit statement.

const auditCols = `id, at, actor, module, level, action, target, source_ip, result, detail`

// ListAudit returns one page of entries newest first, and the total.
func (q Queries) ListAudit(ctx context.Context, f controlplane.AuditFilter) ([]*controlplane.AuditEntry, int, error) {
	var where []string
	a := q.args()
	if f.Module != "" {
		where = append(where, "module = "+a.Add(f.Module))
	}
	if f.Level != "" {
		where = append(where, "level = "+a.Add(f.Level))
	}
	if f.Actor != "" {
		where = append(where, "actor = "+a.Add(f.Actor))
	}
	if f.Since != nil {
		where = append(where, "at >= "+a.AddTime(*f.Since))
	}
	if f.Until != nil {
		where = append(where, "at < "+a.AddTime(*f.Until))
	}
	if f.Query != "" {
		p, like := a.Add(storeutil.ContainsPattern(f.Query)), q.db.ILike()
		where = append(where, fmt.Sprintf(`(action %[2]s %[1]s ESCAPE '\' OR target %[2]s %[1]s ESCAPE '\'
			OR actor %[2]s %[1]s ESCAPE '\' OR detail %[2]s %[1]s ESCAPE '\')`, p, like))
	}
	out := []*controlplane.AuditEntry{}
	var total int
	err := q.db.ReadTx(ctx, func(c Conn) error {
		var err error
		total, err = page(ctx, c, "audit_log", where, a, "id DESC", f.Page, auditCols, func(r Row) (*controlplane.AuditEntry, error) {
			var e controlplane.AuditEntry
			if err := r.Scan(&e.ID, q.db.ScanTime(&e.At), &e.Actor, &e.Module, &e.Level, &e.Action, &e.Target,
				&e.SourceIP, &e.Result, &e.Detail); err != nil {
				return nil, err
			}
			return &e, nil
		}, &out)
		return err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("list audit: %w", err)
	}
	return out, total, nil
}
