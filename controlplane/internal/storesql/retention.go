package storesql

import (
	"context"
	"fmt"
	"strings"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// Retention: history that outlived its bounds is removed in small batches,
// never what live work still needs. A task is needed while it is not
// terminal or an open alert names it in its task_id label; an alert while
// it is open. Ids compare as text, the form alert labels hold them in.

// retentionSQL holds the conditions built from the dialect's JSON and
// byte-length expressions.
type retentionSQL struct {
	prunableTask, auditUnneeded, auditBytes, eventBytes, logBytes string
}

func (q Queries) retentionSQL() retentionSQL {
	terminal := storeutil.TerminalStatesSQL
	taskID := q.db.JSONText("labels", "task_id")
	alertTaskIDs := `SELECT ` + taskID + ` FROM alerts WHERE state <> 'RESOLVED' AND ` + taskID + ` IS NOT NULL`
	sum := func(cols ...string) string {
		parts := make([]string, len(cols))
		for i, c := range cols {
			parts[i] = q.db.ByteLength(c)
		}
		return strings.Join(parts, " + ")
	}
	return retentionSQL{
		// prunableTask is true for a task row t whose history may go.
		prunableTask: `t.state IN (` + terminal + `) AND CAST(t.id AS TEXT) NOT IN (` + alertTaskIDs + `)`,
		// auditUnneeded is true for an audit row whose target nothing open needs.
		auditUnneeded: `target NOT IN (SELECT 'task/' || CAST(id AS TEXT) FROM tasks WHERE state NOT IN (` + terminal + `))
			AND target NOT IN (SELECT 'task/' || ` + taskID + ` FROM alerts WHERE state <> 'RESOLVED' AND ` + taskID + ` IS NOT NULL)
			AND target NOT IN (SELECT 'alert/' || CAST(id AS TEXT) FROM alerts WHERE state <> 'RESOLVED')`,
		auditBytes: sum("actor", "module", "level", "action", "target", "source_ip", "result", "detail"),
		eventBytes: sum("from_state", "to_state", "reason", "actor"),
		logBytes:   q.db.ByteLength("data"),
	}
}

// deleteReturning runs a DELETE … RETURNING <bytes> and sums what it removed.
func deleteReturning(ctx context.Context, c Conn, query string, args ...any) (controlplane.Pruned, error) {
	var p controlplane.Pruned
	rows, err := c.Query(ctx, query, args...)
	if err != nil {
		return p, err
	}
	defer rows.Close()
	for rows.Next() {
		var n int64
		if err := rows.Scan(&n); err != nil {
			return p, err
		}
		p.Rows++
		p.Bytes += n
	}
	return p, rows.Err()
}

func addPruned(a, b controlplane.Pruned) controlplane.Pruned {
	return controlplane.Pruned{Rows: a.Rows + b.Rows, Bytes: a.Bytes + b.Bytes}
}

// PruneAudit removes audit entries older than rule.Before, then the oldest
// beyond rule.MaxRows, sparing those whose target is still needed.
func (q Queries) PruneAudit(ctx context.Context, rule controlplane.PruneRule) (controlplane.Pruned, error) {
	r := q.retentionSQL()
	return q.pruneRows(ctx, rule, "audit log", "audit_log",
		`DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE at < $1 AND `+r.auditUnneeded+`
			ORDER BY id LIMIT $2) RETURNING `+r.auditBytes,
		`DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE `+r.auditUnneeded+`
			ORDER BY id LIMIT $1) RETURNING `+r.auditBytes)
}

// PruneTaskEvents removes the events of terminal tasks that finished before
// rule.Before, then the oldest beyond rule.MaxRows, sparing needed tasks.
func (q Queries) PruneTaskEvents(ctx context.Context, rule controlplane.PruneRule) (controlplane.Pruned, error) {
	r := q.retentionSQL()
	return q.pruneRows(ctx, rule, "task events", "task_events",
		`DELETE FROM task_events WHERE id IN (SELECT e.id FROM task_events e JOIN tasks t ON t.id = e.task_id
			WHERE t.finished_at < $1 AND `+r.prunableTask+` ORDER BY e.id LIMIT $2) RETURNING `+r.eventBytes,
		`DELETE FROM task_events WHERE id IN (SELECT e.id FROM task_events e JOIN tasks t ON t.id = e.task_id
			WHERE `+r.prunableTask+` ORDER BY e.id LIMIT $1) RETURNING `+r.eventBytes)
}

// pruneRows is the age pass (byAge: cutoff, limit) then the row-bound pass
// (bySize: limit) of a row-counted kind, in one write transaction.
func (q Queries) pruneRows(ctx context.Context, rule controlplane.PruneRule, what, table, byAge, bySize string) (controlplane.Pruned, error) {
	if err := storeutil.CheckPruneRule(rule); err != nil {
		return controlplane.Pruned{}, err
	}
	var out controlplane.Pruned
	err := q.db.Tx(ctx, func(c Conn) error {
		out = controlplane.Pruned{}
		if !rule.Before.IsZero() {
			p, err := deleteReturning(ctx, c, byAge, q.db.Time(rule.Before), rule.Limit)
			if err != nil {
				return err
			}
			out = p
		}
		if left := rule.Limit - int(out.Rows); left > 0 && rule.MaxRows > 0 {
			var n int64
			if err := c.QueryRow(ctx, `SELECT count(*) FROM `+table).Scan(&n); err != nil {
				return err
			}
			if excess := storeutil.Excess(n, rule.MaxRows, left); excess > 0 {
				p, err := deleteReturning(ctx, c, bySize, excess)
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
func (q Queries) PruneTaskLogs(ctx context.Context, rule controlplane.PruneRule) (controlplane.Pruned, error) {
	if err := storeutil.CheckPruneRule(rule); err != nil {
		return controlplane.Pruned{}, err
	}
	r := q.retentionSQL()
	var out controlplane.Pruned
	err := q.db.Tx(ctx, func(c Conn) error {
		out = controlplane.Pruned{}
		drop := func(ids []int64) error {
			if len(ids) == 0 {
				return nil
			}
			a := q.args()
			in := make([]string, len(ids))
			for i, id := range ids {
				in[i] = a.Add(id)
			}
			p, err := deleteReturning(ctx, c, `DELETE FROM task_logs WHERE task_id IN (`+joinComma(in)+`) RETURNING `+r.logBytes, a.Vals...)
			out = addPruned(out, p)
			return err
		}
		var aged []int64
		if !rule.Before.IsZero() {
			var err error
			aged, err = all(ctx, c, scanID, `SELECT t.id FROM tasks t WHERE t.finished_at < $1 AND `+r.prunableTask+`
				AND EXISTS (SELECT 1 FROM task_logs l WHERE l.task_id = t.id) ORDER BY t.finished_at, t.id LIMIT $2`,
				q.db.Time(rule.Before), rule.Limit)
			if err != nil {
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
		var total int64
		if err := c.QueryRow(ctx, `SELECT COALESCE(SUM(`+r.logBytes+`), 0) FROM task_logs`).Scan(&total); err != nil {
			return err
		}
		if total <= rule.MaxBytes {
			return nil
		}
		more, err := all(ctx, c, func(row Row) (storeutil.TaskBytes, error) {
			var tb storeutil.TaskBytes
			return tb, row.Scan(&tb.TaskID, &tb.Bytes)
		}, `SELECT l.task_id, SUM(`+q.db.ByteLength("l.data")+`) FROM task_logs l JOIN tasks t ON t.id = l.task_id
			WHERE `+r.prunableTask+` GROUP BY l.task_id ORDER BY MIN(t.finished_at), l.task_id LIMIT $1`, left)
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

func scanID(r Row) (int64, error) {
	var id int64
	return id, r.Scan(&id)
}

// PruneSubmitKeys clears the idempotency keys of tasks, workflows and
// forwarded (hub) tasks created before rule.Before, at most rule.Limit of
// each, oldest first.
func (q Queries) PruneSubmitKeys(ctx context.Context, rule controlplane.PruneRule) (controlplane.Pruned, error) {
	if err := storeutil.CheckPruneRule(rule); err != nil {
		return controlplane.Pruned{}, err
	}
	if rule.Before.IsZero() {
		return controlplane.Pruned{}, nil
	}
	var out controlplane.Pruned
	err := q.db.Write(ctx, func(c Conn) error {
		for _, table := range []string{"tasks", "workflows", "forwarded_tasks"} {
			n, err := c.Exec(ctx, `UPDATE `+table+` SET submit_key = NULL, submit_hash = NULL WHERE id IN (SELECT id FROM `+
				table+` WHERE submit_key IS NOT NULL AND created_at < $1 ORDER BY id LIMIT $2)`, q.db.Time(rule.Before), rule.Limit)
			if err != nil {
				return err
			}
			out.Rows += n
		}
		return nil
	})
	if err != nil {
		return controlplane.Pruned{}, fmt.Errorf("prune submit keys: %w", err)
	}
	return out, nil
}
