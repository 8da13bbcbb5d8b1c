package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

const workflowCols = `id, name, spec, state, COALESCE(owner_id, 0), owner, tenant, project, priority, reason,
	generation, resubmitted_from, created_at, updated_at, started_at, finished_at`

func scanWorkflow(row pgx.Row) (*controlplane.Workflow, error) {
	var w controlplane.Workflow
	if err := row.Scan(&w.ID, &w.Name, &w.Spec, &w.State, &w.OwnerID, &w.Owner, &w.Tenant, &w.Project, &w.Priority,
		&w.Reason, &w.Generation, &w.ResubmittedFrom, &w.CreatedAt, &w.UpdatedAt, &w.StartedAt, &w.FinishedAt); err != nil {
		return nil, mapErr(err)
	}
	w.CreatedAt, w.UpdatedAt = utc(w.CreatedAt), utc(w.UpdatedAt)
	w.StartedAt, w.FinishedAt = utcPtr(w.StartedAt), utcPtr(w.FinishedAt)
	return &w, nil
}

const stepCols = `s.workflow_id, s.name, s.step, s.item_index, s.state, COALESCE(s.task_id, 0),
	COALESCE(t.state, ''), s.generation, s.exit_code, s.outputs, s.reason, s.updated_at, s.started_at, s.finished_at`

func scanStep(row pgx.Row) (*controlplane.WorkflowStep, error) {
	var s controlplane.WorkflowStep
	var outputs []byte
	if err := row.Scan(&s.WorkflowID, &s.Name, &s.Step, &s.Index, &s.State, &s.TaskID, &s.TaskState,
		&s.Generation, &s.ExitCode, &outputs, &s.Reason, &s.UpdatedAt, &s.StartedAt, &s.FinishedAt); err != nil {
		return nil, mapErr(err)
	}
	var err error
	if s.Outputs, err = storeutil.DecodeOutputs(outputs); err != nil {
		return nil, fmt.Errorf("step %s outputs: %w", s.Name, err)
	}
	s.UpdatedAt = utc(s.UpdatedAt)
	s.StartedAt, s.FinishedAt = utcPtr(s.StartedAt), utcPtr(s.FinishedAt)
	return &s, nil
}

// CreateWorkflow stores w (pending) and its steps (pending) with a first
// event in one transaction.
func (db *DB) CreateWorkflow(ctx context.Context, w *controlplane.Workflow, steps []*controlplane.WorkflowStep) error {
	if err := storeutil.PrepareWorkflow(w, steps); err != nil {
		return err
	}
	now := db.now()
	var id int64
	var owner string
	err := db.tx(ctx, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `INSERT INTO workflows (name, spec, state, owner_id, owner, tenant, project,
			priority, reason, generation, resubmitted_from, created_at, updated_at)
			VALUES ($1, $2::jsonb, 'pending', $3, COALESCE(NULLIF($4, ''), (SELECT username FROM users WHERE id = $5), ''),
			$6, $7, $8, $9, 0, $10, $11, $11) RETURNING id, owner`,
			w.Name, string(w.Spec), nullID(w.OwnerID), w.Owner, w.OwnerID, w.Tenant, w.Project, w.Priority, w.Reason,
			w.ResubmittedFrom, now).Scan(&id, &owner)
		if isForeignKey(err) {
			return fmt.Errorf("workflow owner %d: %w", w.OwnerID, controlplane.ErrNotFound)
		}
		if err != nil {
			return mapErr(err)
		}
		names, bases, idx := make([]string, len(steps)), make([]string, len(steps)), make([]int, len(steps))
		for i, s := range steps {
			names[i], bases[i], idx[i] = s.Name, s.Step, s.Index
		}
		if _, err := tx.Exec(ctx, `INSERT INTO workflow_steps (workflow_id, position, name, step, item_index, state,
			generation, updated_at)
			SELECT $1, u.ord - 1, u.name, u.step, u.idx, 'pending', 0, $5
			FROM unnest($2::text[], $3::text[], $4::int[]) WITH ORDINALITY AS u(name, step, idx, ord)`,
			id, names, bases, idx, now); err != nil {
			return mapErr(err)
		}
		_, err = tx.Exec(ctx, `INSERT INTO workflow_events (workflow_id, step, from_state, to_state, reason,
			actor, at) VALUES ($1, '', '', 'pending', $2, $3, $4)`, id, w.Reason, storeutil.FirstEventActor(owner), now)
		return mapErr(err)
	})
	if err != nil {
		return fmt.Errorf("create workflow: %w", err)
	}
	w.ID, w.Owner, w.State, w.Generation = id, owner, controlplane.WorkflowPending, 0
	w.CreatedAt, w.UpdatedAt, w.StartedAt, w.FinishedAt = now, now, nil, nil
	for _, s := range steps {
		s.WorkflowID, s.State, s.TaskID, s.TaskState, s.Generation = id, controlplane.StepPending, 0, "", 0
		s.ExitCode, s.Outputs, s.UpdatedAt, s.StartedAt, s.FinishedAt = nil, nil, now, nil, nil
	}
	return nil
}

// GetWorkflow returns one workflow or ErrNotFound.
func (db *DB) GetWorkflow(ctx context.Context, id int64) (*controlplane.Workflow, error) {
	w, err := scanWorkflow(db.pool.QueryRow(ctx, `SELECT `+workflowCols+` FROM workflows WHERE id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("workflow %d: %w", id, err)
	}
	return w, nil
}

// ListWorkflows returns a page of workflows, newest first.
func (db *DB) ListWorkflows(ctx context.Context, f controlplane.WorkflowFilter) ([]*controlplane.Workflow, int, error) {
	var where []string
	var a args
	if len(f.States) > 0 {
		states := make([]string, len(f.States))
		for i, s := range f.States {
			states[i] = string(s)
		}
		where = append(where, "state = ANY("+a.add(states)+"::text[])")
	}
	if f.OwnerID != 0 {
		where = append(where, "owner_id = "+a.add(f.OwnerID))
	}
	if f.Tenant != "" {
		where = append(where, "tenant = "+a.add(f.Tenant))
	}
	if f.Query != "" {
		where = append(where, `name ILIKE `+a.add(storeutil.ContainsPattern(f.Query))+` ESCAPE '\'`)
	}
	if f.Active {
		where = append(where, `(state IN ('pending', 'running') OR EXISTS (SELECT 1 FROM workflow_steps s
			WHERE s.workflow_id = workflows.id AND s.state = 'running'))`)
	}
	var out []*controlplane.Workflow
	var total int
	err := db.readTx(ctx, func(tx pgx.Tx) error {
		var err error
		total, err = page(ctx, tx, "workflows", where, a, "id DESC", f.Page, workflowCols, func(r pgx.Rows) error {
			w, err := scanWorkflow(r)
			if err == nil {
				out = append(out, w)
			}
			return err
		})
		return err
	})
	return out, total, err
}

// ListWorkflowSteps returns the steps in creation order with their tasks' states.
func (db *DB) ListWorkflowSteps(ctx context.Context, workflowID int64) ([]*controlplane.WorkflowStep, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+stepCols+` FROM workflow_steps s
		LEFT JOIN tasks t ON t.id = s.task_id WHERE s.workflow_id = $1 ORDER BY s.position`, workflowID)
	if err != nil {
		return nil, mapErr(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*controlplane.WorkflowStep, error) { return scanStep(r) })
	return out, mapErr(err)
}

// ListWorkflowEvents returns a workflow's events, oldest first.
func (db *DB) ListWorkflowEvents(ctx context.Context, workflowID int64) ([]*controlplane.WorkflowEvent, error) {
	rows, err := db.pool.Query(ctx, `SELECT id, workflow_id, step, from_state, to_state, reason, actor, at
		FROM workflow_events WHERE workflow_id = $1 ORDER BY id`, workflowID)
	if err != nil {
		return nil, mapErr(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*controlplane.WorkflowEvent, error) {
		var e controlplane.WorkflowEvent
		if err := r.Scan(&e.ID, &e.WorkflowID, &e.Step, &e.From, &e.To, &e.Reason, &e.Actor, &e.At); err != nil {
			return nil, err
		}
		e.At = utc(e.At)
		return &e, nil
	})
	return out, mapErr(err)
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
		out, err = scanWorkflow(tx.QueryRow(ctx, `UPDATE workflows SET state = $1::text, updated_at = $2,
			reason = CASE WHEN $3::bool THEN $4 ELSE reason END, generation = generation + $5::int,
			started_at = CASE WHEN $5::int = 1 OR ($1::text = 'running' AND started_at IS NULL) THEN $2 ELSE started_at END,
			finished_at = CASE WHEN $1::text IN ('succeeded', 'failed', 'cancelled') THEN COALESCE(
				CASE WHEN state IN ('succeeded', 'failed', 'cancelled') THEN finished_at END, $2) ELSE NULL END
			WHERE id = $6 RETURNING `+workflowCols, string(to), now, u.To != "", u.Reason, inc, u.WorkflowID))
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
				return stepGuardError(ctx, tx, u.WorkflowID, c)
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

// stepGuardError explains a step change that matched no row.
func stepGuardError(ctx context.Context, tx pgx.Tx, wf int64, c controlplane.StepChange) error {
	var state string
	err := tx.QueryRow(ctx, `SELECT state FROM workflow_steps WHERE workflow_id = $1 AND name = $2`, wf, c.Name).Scan(&state)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("workflow %d step %q: %w", wf, c.Name, controlplane.ErrNotFound)
	}
	if err != nil {
		return mapErr(err)
	}
	return fmt.Errorf("%w: workflow %d step %s is %s, not %s", controlplane.ErrConflict, wf, c.Name, state, c.From)
}

// PutTaskOutputs records a task attempt's result values.
func (db *DB) PutTaskOutputs(ctx context.Context, taskID int64, attempt int, outputs map[string]string) error {
	js, err := storeutil.OutputsJSON(outputs)
	if err != nil {
		return err
	}
	_, err = db.pool.Exec(ctx, `INSERT INTO task_outputs (task_id, attempt, outputs) VALUES ($1, $2, $3::jsonb)
		ON CONFLICT (task_id, attempt) DO UPDATE SET outputs = excluded.outputs`, taskID, attempt, js)
	if isForeignKey(err) {
		return fmt.Errorf("task %d: %w", taskID, controlplane.ErrNotFound)
	}
	return mapErr(err)
}

// GetTaskOutputs returns a task attempt's result values or ErrNotFound.
func (db *DB) GetTaskOutputs(ctx context.Context, taskID int64, attempt int) (map[string]string, error) {
	var js []byte
	err := db.pool.QueryRow(ctx, `SELECT outputs FROM task_outputs WHERE task_id = $1 AND attempt = $2`,
		taskID, attempt).Scan(&js)
	if err != nil {
		return nil, fmt.Errorf("task %d attempt %d outputs: %w", taskID, attempt, mapErr(err))
	}
	m, err := storeutil.DecodeOutputs(js)
	if m == nil && err == nil {
		m = map[string]string{}
	}
	return m, err
}

var _ controlplane.WorkflowStore = (*DB)(nil)
