package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// appendAuditBatchSQL inserts a whole batch, one array per column, in one
// statement: one round trip and one commit whatever the batch size. As in
// createTasksSQL, IDs are drawn in the numbered CTE and inserted explicitly,
// so each entry's ID is known by its ordinal.
const appendAuditBatchSQL = `WITH n AS (
	SELECT nextval(pg_get_serial_sequence('audit_log', 'id')) AS id, u.*
	FROM unnest($1::timestamptz[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
		$8::text[], $9::text[])
		WITH ORDINALITY AS u(at, actor, module, level, action, target, source_ip, result, detail, ord)
), i AS (
	INSERT INTO audit_log (id, at, actor, module, level, action, target, source_ip, result, detail)
	OVERRIDING SYSTEM VALUE
	SELECT id, at, actor, module, level, action, target, source_ip, result, detail FROM n
)
SELECT ord, id FROM n`

// AppendAuditBatch stores entries with one statement (httpapi.AuditBatcher):
// a burst of audited requests costs one round trip and one commit. All or
// none are stored.
func (db *DB) AppendAuditBatch(ctx context.Context, entries []*controlplane.AuditEntry) error {
	if len(entries) == 0 {
		return nil
	}
	now := db.now()
	n := len(entries)
	at := make([]time.Time, 0, n)
	actor, module, level, action := make([]string, 0, n), make([]string, 0, n), make([]string, 0, n), make([]string, 0, n)
	target, sourceIP, result, detail := make([]string, 0, n), make([]string, 0, n), make([]string, 0, n), make([]string, 0, n)
	for _, e := range entries {
		if err := storeutil.PrepareAudit(e, now); err != nil {
			return err
		}
		at, actor, module = append(at, e.At), append(actor, e.Actor), append(module, string(e.Module))
		level, action, target = append(level, string(e.Level)), append(action, e.Action), append(target, e.Target)
		sourceIP, result, detail = append(sourceIP, e.SourceIP), append(result, e.Result), append(detail, e.Detail)
	}
	rows, err := db.pool.Query(ctx, appendAuditBatchSQL, at, actor, module, level, action, target, sourceIP,
		result, detail)
	if err != nil {
		return fmt.Errorf("append audit batch: %w", mapErr(err))
	}
	ids := make([]int64, n)
	seen := 0
	var ord, id int64
	_, err = pgx.ForEachRow(rows, []any{&ord, &id}, func() error {
		if ord < 1 || ord > int64(n) || ids[ord-1] != 0 {
			return fmt.Errorf("unexpected row ordinal %d", ord)
		}
		ids[ord-1] = id
		seen++
		return nil
	})
	if err != nil {
		return fmt.Errorf("append audit batch: %w", mapErr(err))
	}
	if seen != n {
		return fmt.Errorf("append audit batch: inserted %d of %d entries", seen, n)
	}
	for i, e := range entries {
		e.ID = ids[i]
	}
	return nil
}
