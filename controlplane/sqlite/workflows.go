package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storesql"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// insertWorkflowSteps is the store's part of the shared CreateWorkflow: one
// prepared insert a step.
func (db *DB) insertWorkflowSteps(ctx context.Context, tx *sql.Tx, id int64, steps []*controlplane.WorkflowStep, now time.Time) error {
	ins, err := tx.PrepareContext(ctx, `INSERT INTO workflow_steps (workflow_id, position, name, step, item_index,
		state, generation, updated_at) VALUES (?, ?, ?, ?, ?, 'pending', 0, ?)`)
	if err != nil {
		return mapErr(err)
	}
	defer ins.Close()
	for i, s := range steps {
		if _, err := ins.ExecContext(ctx, id, i, s.Name, s.Step, s.Index, ts(now)); err != nil {
			return fmt.Errorf("step %s: %w", s.Name, mapErr(err))
		}
	}
	return nil
}

// UpdateWorkflow applies u in one transaction: the guarded workflow change,
// then every guarded step change (creating the tasks of released steps).
func (db *DB) UpdateWorkflow(ctx context.Context, u controlplane.WorkflowUpdate) (*controlplane.Workflow, error) {
	if err := storeutil.CheckWorkflowUpdate(u); err != nil {
		return nil, err
	}
	tasks := make([]storeutil.NewTask, len(u.Steps))
	for i, c := range u.Steps {
		if c.Task == nil {
			continue
		}
		n, err := storeutil.PrepareTask(c.Task)
		if err != nil {
			return nil, fmt.Errorf("step %s: %w", c.Name, err)
		}
		tasks[i] = n
	}
	now := db.now()
	taskIDs, owners := make([]int64, len(u.Steps)), make([]string, len(u.Steps))
	var out *controlplane.Workflow
	err := db.write(ctx, func(tx *sql.Tx) error {
		cur, err := storesql.ScanWorkflow(shared{db}, conn{tx}.QueryRow(ctx, `SELECT `+storesql.WorkflowCols+` FROM workflows WHERE id = ?`, u.WorkflowID))
		if err != nil {
			return fmt.Errorf("workflow %d: %w", u.WorkflowID, err)
		}
		if u.From != "" && cur.State != u.From {
			return fmt.Errorf("%w: workflow %d is %s, not %s", controlplane.ErrConflict, u.WorkflowID, cur.State, u.From)
		}
		to := cur.State
		if u.To != "" {
			to = u.To
		}
		inc := 0
		if u.Retry {
			inc = 1
		}
		out, err = storesql.ScanWorkflow(shared{db}, conn{tx}.QueryRow(ctx, `UPDATE workflows SET state = ?1, updated_at = ?2,
			reason = CASE WHEN ?3 THEN ?4 ELSE reason END, generation = generation + ?5,
			started_at = CASE WHEN ?5 = 1 OR (?1 = 'running' AND started_at IS NULL) THEN ?2 ELSE started_at END,
			finished_at = CASE WHEN ?1 IN ('succeeded', 'failed', 'cancelled') THEN COALESCE(
				CASE WHEN state IN ('succeeded', 'failed', 'cancelled') THEN finished_at END, ?2) ELSE NULL END
			WHERE id = ?6 RETURNING `+storesql.WorkflowCols, string(to), ts(now), u.To != "", u.Reason, inc, u.WorkflowID))
		if err != nil {
			return err
		}
		if u.To != "" && u.To != cur.State || u.Retry {
			if _, err := tx.ExecContext(ctx, `INSERT INTO workflow_events (workflow_id, step, from_state, to_state,
				reason, actor, at) VALUES (?, '', ?, ?, ?, ?, ?)`, u.WorkflowID, string(cur.State), string(to),
				u.Reason, u.Actor, ts(now)); err != nil {
				return mapErr(err)
			}
		}
		for i, c := range u.Steps {
			var task any
			if c.Task != nil {
				n := tasks[i]
				err := tx.QueryRowContext(ctx, insertTaskSQL, taskInsertArgs(n, now)...).Scan(&taskIDs[i], &owners[i])
				if err != nil {
					return fmt.Errorf("step %s task: %w", c.Name, mapErr(err))
				}
				if _, err := tx.ExecContext(ctx, insertFirstEventSQL, taskIDs[i], n.Task.Reason,
					storeutil.FirstEventActor(owners[i]), ts(now)); err != nil {
					return fmt.Errorf("step %s task event: %w", c.Name, mapErr(err))
				}
				task = taskIDs[i]
			}
			outputs, err := storeutil.OutputsJSON(c.Outputs)
			if err != nil {
				return err
			}
			var exit any
			if c.ExitCode != nil {
				exit = *c.ExitCode
			}
			res, err := tx.ExecContext(ctx, `UPDATE workflow_steps SET state = ?1, reason = ?2, updated_at = ?3,
				task_id = CASE WHEN ?4 THEN NULL ELSE COALESCE(?5, task_id) END,
				generation = CASE WHEN ?4 THEN ?6 ELSE generation END,
				exit_code = CASE WHEN ?4 THEN NULL ELSE COALESCE(?7, exit_code) END,
				outputs = CASE WHEN ?4 THEN '{}' WHEN ?8 <> '{}' THEN ?8 ELSE outputs END,
				started_at = CASE WHEN ?4 THEN NULL WHEN ?1 = 'running' THEN ?3 ELSE started_at END,
				finished_at = CASE WHEN ?1 IN ('succeeded', 'failed', 'cancelled', 'skipped') THEN ?3 ELSE NULL END
				WHERE workflow_id = ?9 AND name = ?10 AND state = ?11`, string(c.To), c.Reason, ts(now), c.Reset, task,
				out.Generation, exit, outputs, u.WorkflowID, c.Name, string(c.From))
			if err != nil {
				return fmt.Errorf("step %s: %w", c.Name, mapErr(err))
			}
			if n, err := res.RowsAffected(); err != nil {
				return mapErr(err)
			} else if n == 0 {
				return storesql.StepGuardError(ctx, conn{tx}, u.WorkflowID, c)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO workflow_events (workflow_id, step, from_state, to_state,
				reason, actor, at) VALUES (?, ?, ?, ?, ?, ?, ?)`, u.WorkflowID, c.Name, string(c.From), string(c.To),
				c.Reason, u.Actor, ts(now)); err != nil {
				return mapErr(err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i, n := range tasks {
		if n.Task != nil {
			n.Submitted(taskIDs[i], owners[i], now)
		}
	}
	return out, nil
}

// Workflow reads and task outputs are shared (storesql/workflows.go); the
// inserts and the guarded update stay here.
var _ controlplane.WorkflowStore = (*DB)(nil)
