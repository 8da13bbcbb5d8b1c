package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// appendAuditCTE inserts audit entries, given as one array per column
// ($27–$35); part of writeBatchSQL (writes.go). a numbers the rows and
// draws their IDs.
const appendAuditCTE = `a AS (
	SELECT nextval(pg_get_serial_sequence('audit_log', 'id')) AS id, u.*
	FROM unnest($27::timestamptz[], $28::text[], $29::text[], $30::text[], $31::text[], $32::text[],
		$33::text[], $34::text[], $35::text[])
		WITH ORDINALITY AS u(at, actor, module, level, action, target, source_ip, result, detail, ord)
), ai AS (
	INSERT INTO audit_log (id, at, actor, module, level, action, target, source_ip, result, detail)
	OVERRIDING SYSTEM VALUE
	SELECT id, at, actor, module, level, action, target, source_ip, result, detail FROM a
)`

// AppendAuditBatch stores entries with one multi-row statement
// (httpapi.AuditBatcher), all or none. It joins the task submissions'
// group commit (writes.go): a burst of audited requests costs no commit,
// and no WAL flush, of its own.
func (db *DB) AppendAuditBatch(ctx context.Context, entries []*controlplane.AuditEntry) error {
	if len(entries) == 0 {
		return nil
	}
	now := db.now()
	for _, e := range entries {
		if err := storeutil.PrepareAudit(e, now); err != nil {
			return err
		}
	}
	if err := db.writes.Do(ctx, writeUnit{audit: entries}); err != nil {
		return fmt.Errorf("append audit batch: %w", err)
	}
	return nil
}

// auditColumns turns entries into the 9 column arrays of appendAuditCTE, in
// parameter order.
func auditColumns(entries []*controlplane.AuditEntry) []any {
	n := len(entries)
	at := make([]time.Time, 0, n)
	actor, module, level, action := make([]string, 0, n), make([]string, 0, n), make([]string, 0, n), make([]string, 0, n)
	target, sourceIP, result, detail := make([]string, 0, n), make([]string, 0, n), make([]string, 0, n), make([]string, 0, n)
	for _, e := range entries {
		at, actor, module = append(at, e.At), append(actor, e.Actor), append(module, string(e.Module))
		level, action, target = append(level, string(e.Level)), append(action, e.Action), append(target, e.Target)
		sourceIP, result, detail = append(sourceIP, e.SourceIP), append(result, e.Result), append(detail, e.Detail)
	}
	return []any{at, actor, module, level, action, target, sourceIP, result, detail}
}
