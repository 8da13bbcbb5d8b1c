package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

var _ controlplane.RetentionStore = (*DB)(nil)

// Retention SQL. A task is still needed while it is not terminal or an
// open alert names it in its task_id label; an alert while it is open.
// Ids compare as text, the form alert labels hold them in.
var (
	terminalSQL = storeutil.TerminalStatesSQL

	alertTaskIDs = `SELECT labels::jsonb->>'task_id' FROM alerts
		WHERE state <> 'RESOLVED' AND labels::jsonb->>'task_id' IS NOT NULL`

	// prunableTask is true for a task row t whose history may go.
	prunableTask = `t.state IN (` + terminalSQL + `) AND t.id::text NOT IN (` + alertTaskIDs + `)`

	// auditUnneeded is true for an audit row whose target nothing open needs.
	auditUnneeded = `target NOT IN (SELECT 'task/' || id::text FROM tasks WHERE state NOT IN (` + terminalSQL + `))
		AND target NOT IN (SELECT 'task/' || (labels::jsonb->>'task_id') FROM alerts
			WHERE state <> 'RESOLVED' AND labels::jsonb->>'task_id' IS NOT NULL)
		AND target NOT IN (SELECT 'alert/' || id::text FROM alerts WHERE state <> 'RESOLVED')`

	auditBytes = `octet_length(actor) + octet_length(module) + octet_length(level) + octet_length(action)
		+ octet_length(target) + octet_length(source_ip) + octet_length(result) + octet_length(detail)`

	eventBytes = `octet_length(from_state) + octet_length(to_state) + octet_length(reason) + octet_length(actor)`
)

// deleteReturning runs a DELETE … RETURNING <bytes> and sums what it removed.
func deleteReturning(ctx context.Context, tx pgx.Tx, q string, args ...any) (controlplane.Pruned, error) {
	var p controlplane.Pruned
	rows, err := tx.Query(ctx, q, args...)
	if err != nil {
		return p, mapErr(err)
	}
	defer rows.Close()
	for rows.Next() {
		var n int64
		if err := rows.Scan(&n); err != nil {
			return p, mapErr(err)
		}
		p.Rows++
		p.Bytes += n
	}
	return p, mapErr(rows.Err())
}

func addPruned(a, b controlplane.Pruned) controlplane.Pruned {
	return controlplane.Pruned{Rows: a.Rows + b.Rows, Bytes: a.Bytes + b.Bytes}
}

// PruneAudit removes audit entries older than rule.Before, then the oldest
// beyond rule.MaxRows, sparing those whose target is still needed.
func (db *DB) PruneAudit(ctx context.Context, rule controlplane.PruneRule) (controlplane.Pruned, error) {
	return db.pruneRows(ctx, rule, "audit log", "audit_log",
		`DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE at < $1 AND `+auditUnneeded+`
			ORDER BY id LIMIT $2) RETURNING `+auditBytes,
		`DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE `+auditUnneeded+`
			ORDER BY id LIMIT $1) RETURNING `+auditBytes)
}

// PruneTaskEvents removes the events of terminal tasks that finished before
// rule.Before, then the oldest beyond rule.MaxRows, sparing needed tasks.
func (db *DB) PruneTaskEvents(ctx context.Context, rule controlplane.PruneRule) (controlplane.Pruned, error) {
	return db.pruneRows(ctx, rule, "task events", "task_events",
		`DELETE FROM task_events WHERE id IN (SELECT e.id FROM task_events e JOIN tasks t ON t.id = e.task_id
			WHERE t.finished_at < $1 AND `+prunableTask+` ORDER BY e.id LIMIT $2) RETURNING `+eventBytes,
		`DELETE FROM task_events WHERE id IN (SELECT e.id FROM task_events e JOIN tasks t ON t.id = e.task_id
			WHERE `+prunableTask+` ORDER BY e.id LIMIT $1) RETURNING `+eventBytes)
}

// pruneRows is the age pass (byAge: cutoff, limit) then the row-bound pass
// (bySize: limit) of a row-counted kind, in one transaction.
func (db *DB) pruneRows(ctx context.Context, rule controlplane.PruneRule, what, table, byAge, bySize string) (controlplane.Pruned, error) {
	if err := storeutil.CheckPruneRule(rule); err != nil {
		return controlplane.Pruned{}, err
	}
	var out controlplane.Pruned
	err := db.tx(ctx, func(tx pgx.Tx) error {
		out = controlplane.Pruned{}
		if !rule.Before.IsZero() {
			p, err := deleteReturning(ctx, tx, byAge, rule.Before.UTC(), rule.Limit)
			if err != nil {
				return err
			}
			out = p
		}
		if left := rule.Limit - int(out.Rows); left > 0 && rule.MaxRows > 0 {
			var n int64
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM `+table).Scan(&n); err != nil {
				return mapErr(err)
			}
			if excess := storeutil.Excess(n, rule.MaxRows, left); excess > 0 {
				p, err := deleteReturning(ctx, tx, bySize, excess)
				if err != nil {
					return err
				}
				out = addPruned(out, p)
			}
		}
		return nil
	})
	if err != nil {
		return controlplane.Pruned{}, fmt.Errorf("prune %s: %w", what, err)
	}
	return out, nil
}

// PruneTaskLogs removes all log chunks of terminal tasks that finished
// before rule.Before, then of the oldest finished tasks while the stored
// log data exceeds rule.MaxBytes; rule.Limit counts tasks.
func (db *DB) PruneTaskLogs(ctx context.Context, rule controlplane.PruneRule) (controlplane.Pruned, error) {
	if err := storeutil.CheckPruneRule(rule); err != nil {
		return controlplane.Pruned{}, err
	}
	var out controlplane.Pruned
	err := db.tx(ctx, func(tx pgx.Tx) error {
		out = controlplane.Pruned{}
		drop := func(ids []int64) error {
			if len(ids) == 0 {
				return nil
			}
			p, err := deleteReturning(ctx, tx, `DELETE FROM task_logs WHERE task_id = ANY($1) RETURNING octet_length(data)`, ids)
			out = addPruned(out, p)
			return err
		}
		var aged []int64
		if !rule.Before.IsZero() {
			rows, err := tx.Query(ctx, `SELECT t.id FROM tasks t WHERE t.finished_at < $1 AND `+prunableTask+`
				AND EXISTS (SELECT 1 FROM task_logs l WHERE l.task_id = t.id) ORDER BY t.finished_at, t.id LIMIT $2`,
				rule.Before.UTC(), rule.Limit)
			if err != nil {
				return mapErr(err)
			}
			if aged, err = pgx.CollectRows(rows, pgx.RowTo[int64]); err != nil {
				return mapErr(err)
			}
			if err := drop(aged); err != nil {
				return err
			}
		}
		left := rule.Limit - len(aged)
		if left <= 0 || rule.MaxBytes <= 0 {
			return nil
		}
		var total int64
		if err := tx.QueryRow(ctx, `SELECT COALESCE(SUM(octet_length(data)), 0)::bigint FROM task_logs`).Scan(&total); err != nil {
			return mapErr(err)
		}
		if total <= rule.MaxBytes {
			return nil
		}
		rows, err := tx.Query(ctx, `SELECT l.task_id, SUM(octet_length(l.data))::bigint FROM task_logs l JOIN tasks t ON t.id = l.task_id
			WHERE `+prunableTask+` GROUP BY l.task_id ORDER BY MIN(t.finished_at), l.task_id LIMIT $1`, left)
		if err != nil {
			return mapErr(err)
		}
		more, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (storeutil.TaskBytes, error) {
			var c storeutil.TaskBytes
			return c, r.Scan(&c.TaskID, &c.Bytes)
		})
		if err != nil {
			return mapErr(err)
		}
		return drop(storeutil.CoverBytes(more, total-rule.MaxBytes))
	})
	if err != nil {
		return controlplane.Pruned{}, fmt.Errorf("prune task logs: %w", err)
	}
	return out, nil
}
