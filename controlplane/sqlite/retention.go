package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

var _ controlplane.RetentionStore = (*DB)(nil)

// Retention SQL. A task is still needed while it is not terminal or an
// open alert names it in its task_id label; an alert while it is open.
// Ids compare as text, the form alert labels hold them in.
var (
	terminalSQL = storeutil.TerminalStatesSQL

	alertTaskIDs = `SELECT json_extract(labels, '$.task_id') FROM alerts
		WHERE state <> 'RESOLVED' AND json_extract(labels, '$.task_id') IS NOT NULL`

	// prunableTask is true for a task row t whose history may go.
	prunableTask = `t.state IN (` + terminalSQL + `) AND CAST(t.id AS TEXT) NOT IN (` + alertTaskIDs + `)`

	// auditUnneeded is true for an audit row whose target nothing open needs.
	auditUnneeded = `target NOT IN (SELECT 'task/' || id FROM tasks WHERE state NOT IN (` + terminalSQL + `))
		AND target NOT IN (SELECT 'task/' || json_extract(labels, '$.task_id') FROM alerts
			WHERE state <> 'RESOLVED' AND json_extract(labels, '$.task_id') IS NOT NULL)
		AND target NOT IN (SELECT 'alert/' || id FROM alerts WHERE state <> 'RESOLVED')`

	auditBytes = `length(CAST(actor AS BLOB)) + length(CAST(module AS BLOB)) + length(CAST(level AS BLOB))
		+ length(CAST(action AS BLOB)) + length(CAST(target AS BLOB)) + length(CAST(source_ip AS BLOB))
		+ length(CAST(result AS BLOB)) + length(CAST(detail AS BLOB))`

	eventBytes = `length(CAST(from_state AS BLOB)) + length(CAST(to_state AS BLOB))
		+ length(CAST(reason AS BLOB)) + length(CAST(actor AS BLOB))`
)

// deleteReturning runs a DELETE … RETURNING <bytes> and sums what it removed.
func deleteReturning(ctx context.Context, tx *sql.Tx, q string, args ...any) (controlplane.Pruned, error) {
	var p controlplane.Pruned
	rows, err := tx.QueryContext(ctx, q, args...)
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

func count(ctx context.Context, tx *sql.Tx, q string) (int64, error) {
	var n int64
	err := tx.QueryRowContext(ctx, q).Scan(&n)
	return n, mapErr(err)
}

// PruneAudit removes audit entries older than rule.Before, then the oldest
// beyond rule.MaxRows, sparing those whose target is still needed.
func (db *DB) PruneAudit(ctx context.Context, rule controlplane.PruneRule) (controlplane.Pruned, error) {
	return db.pruneRows(ctx, rule, "audit log", "audit_log",
		`DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE at < ? AND `+auditUnneeded+`
			ORDER BY id LIMIT ?) RETURNING `+auditBytes,
		`DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE `+auditUnneeded+`
			ORDER BY id LIMIT ?) RETURNING `+auditBytes)
}

// PruneTaskEvents removes the events of terminal tasks that finished before
// rule.Before, then the oldest beyond rule.MaxRows, sparing needed tasks.
func (db *DB) PruneTaskEvents(ctx context.Context, rule controlplane.PruneRule) (controlplane.Pruned, error) {
	return db.pruneRows(ctx, rule, "task events", "task_events",
		`DELETE FROM task_events WHERE id IN (SELECT e.id FROM task_events e JOIN tasks t ON t.id = e.task_id
			WHERE t.finished_at < ? AND `+prunableTask+` ORDER BY e.id LIMIT ?) RETURNING `+eventBytes,
		`DELETE FROM task_events WHERE id IN (SELECT e.id FROM task_events e JOIN tasks t ON t.id = e.task_id
			WHERE `+prunableTask+` ORDER BY e.id LIMIT ?) RETURNING `+eventBytes)
}

// pruneRows is the age pass (byAge: cutoff, limit) then the row-bound pass
// (bySize: limit) of a row-counted kind, in one write transaction.
func (db *DB) pruneRows(ctx context.Context, rule controlplane.PruneRule, what, table, byAge, bySize string) (controlplane.Pruned, error) {
	if err := storeutil.CheckPruneRule(rule); err != nil {
		return controlplane.Pruned{}, err
	}
	var out controlplane.Pruned
	err := db.write(ctx, func(tx *sql.Tx) error {
		out = controlplane.Pruned{}
		if !rule.Before.IsZero() {
			p, err := deleteReturning(ctx, tx, byAge, ts(rule.Before), rule.Limit)
			if err != nil {
				return err
			}
			out = p
		}
		if left := rule.Limit - int(out.Rows); left > 0 && rule.MaxRows > 0 {
			n, err := count(ctx, tx, `SELECT count(*) FROM `+table)
			if err != nil {
				return err
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
	err := db.write(ctx, func(tx *sql.Tx) error {
		out = controlplane.Pruned{}
		drop := func(ids []int64) error {
			for _, id := range ids {
				p, err := deleteReturning(ctx, tx, `DELETE FROM task_logs WHERE task_id = ? RETURNING length(data)`, id)
				if err != nil {
					return err
				}
				out = addPruned(out, p)
			}
			return nil
		}
		var aged []int64
		if !rule.Before.IsZero() {
			rows, err := tx.QueryContext(ctx, `SELECT t.id FROM tasks t WHERE t.finished_at < ? AND `+prunableTask+`
				AND EXISTS (SELECT 1 FROM task_logs l WHERE l.task_id = t.id) ORDER BY t.finished_at, t.id LIMIT ?`,
				ts(rule.Before), rule.Limit)
			if err != nil {
				return mapErr(err)
			}
			if aged, err = scanIDs(rows); err != nil {
				return err
			}
			if err := drop(aged); err != nil {
				return err
			}
		}
		left := rule.Limit - len(aged)
		if left <= 0 || rule.MaxBytes <= 0 {
			return nil
		}
		total, err := count(ctx, tx, `SELECT COALESCE(SUM(length(data)), 0) FROM task_logs`)
		if err != nil || total <= rule.MaxBytes {
			return err
		}
		more, err := logCandidates(ctx, tx, left)
		if err != nil {
			return err
		}
		return drop(storeutil.CoverBytes(more, total-rule.MaxBytes))
	})
	if err != nil {
		return controlplane.Pruned{}, fmt.Errorf("prune task logs: %w", err)
	}
	return out, nil
}

// logCandidates lists prunable tasks with logs, oldest finished first, with
// their log bytes.
func logCandidates(ctx context.Context, tx *sql.Tx, limit int) ([]storeutil.TaskBytes, error) {
	rows, err := tx.QueryContext(ctx, `SELECT l.task_id, SUM(length(l.data)) FROM task_logs l JOIN tasks t ON t.id = l.task_id
		WHERE `+prunableTask+` GROUP BY l.task_id ORDER BY MIN(t.finished_at), l.task_id LIMIT ?`, limit)
	if err != nil {
		return nil, mapErr(err)
	}
	defer rows.Close()
	var out []storeutil.TaskBytes
	for rows.Next() {
		var c storeutil.TaskBytes
		if err := rows.Scan(&c.TaskID, &c.Bytes); err != nil {
			return nil, mapErr(err)
		}
		out = append(out, c)
	}
	return out, mapErr(rows.Err())
}

func scanIDs(rows *sql.Rows) ([]int64, error) {
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, mapErr(err)
		}
		ids = append(ids, id)
	}
	return ids, mapErr(rows.Err())
}
