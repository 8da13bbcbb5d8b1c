package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storesql"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// insertWorkflowSteps is the store's part of the shared CreateWorkflow:
// every step in one statement.
func insertWorkflowSteps(ctx context.Context, tx pgx.Tx, id int64, steps []*controlplane.WorkflowStep, now time.Time) error {
	names, bases, idx := make([]string, len(steps)), make([]string, len(steps)), make([]int, len(steps))
	for i, s := range steps {
		names[i], bases[i], idx[i] = s.Name, s.Step, s.Index
	}
	_, err := tx.Exec(ctx, `INSERT INTO workflow_steps (workflow_id, position, name, step, item_index, state,
		generation, updated_at)
		SELECT $1, u.ord - 1, u.name, u.step, u.idx, 'pending', 0, $5
		FROM unnest($2::text[], $3::text[], $4::int[]) WITH ORDINALITY AS u(name, step, idx, ord)`,
		id, names, bases, idx, now)
	return mapErr(err)
}

// UpdateWorkflow applies u in one transaction: the guarded workflow change
// (the row is locked first, so concurrent updates serialise), the tasks of
// released steps in one statement, then every guarded step change.
func (db *DB) UpdateWorkflow(ctx context.Context, u controlplane.WorkflowUpdate) (*controlplane.Workflow, error) {
	if err := storeutil.CheckWorkflowUpdate(u); err != nil {
		return nil, err
	}
	var tasks []storeutil.NewTask
	taskOf := make([]int, len(u.Steps)) // step change → index in tasks, -1 none
	for i, c := range u.Steps {
		taskOf[i] = -1
		if c.Task == nil {
			continue
		}
		n, err := storeutil.PrepareTask(c.Task)
		if err != nil {
			return nil, fmt.Errorf("step %s: %w", c.Name, err)
		}
		taskOf[i] = len(tasks)
		tasks = append(tasks, n)
	}
	now := db.now()
	taskIDs, owners := make([]int64, len(tasks)), make([]string, len(tasks))
	var out *controlplane.Workflow
	err := db.tx(ctx, func(tx pgx.Tx) error {
		var cur controlplane.WorkflowState
		err := tx.QueryRow(ctx, `SELECT state FROM workflows WHERE id = $1 FOR UPDATE`, u.WorkflowID).Scan(&cur)
		if err != nil {
			return fmt.Errorf("workflow %d: %w", u.WorkflowID, mapErr(err))
		}
		if u.From != "" && cur != u.From {
			return fmt.Errorf("%w: workflow %d is %s, not %s", controlplane.ErrConflict, u.WorkflowID, cur, u.From)
		}
		to := cur
		if u.To != "" {
			to = u.To
		}
		inc := 0
		if u.Retry {
			inc = 1
		}
		out, err = storesql.ScanWorkflow(shared{db}, conn{tx}.QueryRow(ctx, `UPDATE workflows SET state = $1::text, updated_at = $2,
			reason = CASE WHEN $3::bool THEN $4 ELSE reason END, generation = generation + $5::int,
			started_at = CASE WHEN $5::int = 1 OR ($1::text = 'running' AND started_at IS NULL) THEN $2 ELSE started_at END,
			finished_at = CASE WHEN $1::text IN ('succeeded', 'failed', 'cancelled') THEN COALESCE(
				CASE WHEN state IN ('succeeded', 'failed', 'cancelled') THEN finished_at END, $2) ELSE NULL END
			WHERE id = $6 RETURNING `+storesql.WorkflowCols, string(to), now, u.To != "", u.Reason, inc, u.WorkflowID))
		if err != nil {
			return err
		}
		if u.To != "" && u.To != cur || u.Retry {
			if _, err := tx.Exec(ctx, `INSERT INTO workflow_events (workflow_id, step, from_state, to_state,
				reason, actor, at) VALUES ($1, '', $2, $3, $4, $5, $6)`, u.WorkflowID, string(cur), string(to),
				u.Reason, u.Actor, now); err != nil {
				return mapErr(err)
			}
		}
		if len(tasks) > 0 {
			// The task submission statement, with no audit entries.
			rows, err := tx.Query(ctx, writeBatchSQL, writeBatchParams(tasks, nil, now)...)
			if err != nil {
				return mapErr(err)
			}
			var kind, owner string
			var ord, id int64
			if _, err := pgx.ForEachRow(rows, []any{&kind, &ord, &id, &owner}, func() error {
				taskIDs[ord-1], owners[ord-1] = id, owner
				return nil
			}); err != nil {
				return mapErr(err)
			}
		}
		for i, c := range u.Steps {
			var task *int64
			if taskOf[i] >= 0 {
				task = &taskIDs[taskOf[i]]
			}
			outputs, err := storeutil.OutputsJSON(c.Outputs)
			if err != nil {
				return err
			}
			tag, err := tx.Exec(ctx, `UPDATE workflow_steps SET state = $1::text, reason = $2, updated_at = $3,
				task_id = CASE WHEN $4::bool THEN NULL ELSE COALESCE($5::bigint, task_id) END,
				generation = CASE WHEN $4::bool THEN $6::int ELSE generation END,
				exit_code = CASE WHEN $4::bool THEN NULL ELSE COALESCE($7::int, exit_code) END,
				outputs = CASE WHEN $4::bool THEN '{}'::jsonb WHEN $8::text <> '{}' THEN $8::jsonb ELSE outputs END,
				started_at = CASE WHEN $4::bool THEN NULL WHEN $1::text = 'running' THEN $3 ELSE started_at END,
				finished_at = CASE WHEN $1::text IN ('succeeded', 'failed', 'cancelled', 'skipped') THEN $3 ELSE NULL END
				WHERE workflow_id = $9 AND name = $10 AND state = $11::text`, string(c.To), c.Reason, now, c.Reset, task,
				out.Generation, c.ExitCode, outputs, u.WorkflowID, c.Name, string(c.From))
			if err != nil {
				return fmt.Errorf("step %s: %w", c.Name, mapErr(err))
			}
			if tag.RowsAffected() == 0 {
				return storesql.StepGuardError(ctx, conn{tx}, u.WorkflowID, c)
			}
		}
		if len(u.Steps) > 0 {
			names, froms, tos, reasons := make([]string, len(u.Steps)), make([]string, len(u.Steps)),
				make([]string, len(u.Steps)), make([]string, len(u.Steps))
			for i, c := range u.Steps {
				names[i], froms[i], tos[i], reasons[i] = c.Name, string(c.From), string(c.To), c.Reason
			}
			if _, err := tx.Exec(ctx, `INSERT INTO workflow_events (workflow_id, step, from_state, to_state, reason,
				actor, at) SELECT $1, u.step, u.f, u.t, u.r, $6, $7
				FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS u(step, f, t, r, ord)
				ORDER BY u.ord`, u.WorkflowID, names, froms, tos, reasons, u.Actor, now); err != nil {
				return mapErr(err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i, n := range tasks {
		n.Submitted(taskIDs[i], owners[i], now)
	}
	return out, nil
}

// Workflow reads and task outputs are shared (storesql/workflows.go); the
// inserts and the guarded update stay here.
var _ controlplane.WorkflowStore = (*DB)(nil)
