package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

const workflowCols = `id, name, spec, state, COALESCE(owner_id, 0), owner, tenant, project, priority, reason,
	generation, resubmitted_from, created_at, updated_at, started_at, finished_at`

func scanWorkflow(row rowScanner) (*controlplane.Workflow, error) {
	var w controlplane.Workflow
	var spec string
	var created, updated int64
	var started, finished sql.NullInt64
	if err := row.Scan(&w.ID, &w.Name, &spec, &w.State, &w.OwnerID, &w.Owner, &w.Tenant, &w.Project, &w.Priority,
		&w.Reason, &w.Generation, &w.ResubmittedFrom, &created, &updated, &started, &finished); err != nil {
		return nil, mapErr(err)
	}
	w.Spec = []byte(spec)
	w.CreatedAt, w.UpdatedAt = fromTS(created), fromTS(updated)
	w.StartedAt, w.FinishedAt = fromNullTS(started), fromNullTS(finished)
	return &w, nil
}

const stepCols = `s.workflow_id, s.name, s.step, s.item_index, s.state, COALESCE(s.task_id, 0),
	COALESCE(t.state, ''), s.generation, s.exit_code, s.outputs, s.reason, s.updated_at, s.started_at, s.finished_at`

func scanStep(row rowScanner) (*controlplane.WorkflowStep, error) {
	var s controlplane.WorkflowStep
	var outputs []byte
	var exit, started, finished sql.NullInt64
	var updated int64
	if err := row.Scan(&s.WorkflowID, &s.Name, &s.Step, &s.Index, &s.State, &s.TaskID, &s.TaskState,
		&s.Generation, &exit, &outputs, &s.Reason, &updated, &started, &finished); err != nil {
		return nil, mapErr(err)
	}
	var err error
	if s.Outputs, err = storeutil.DecodeOutputs(outputs); err != nil {
		return nil, fmt.Errorf("step %s outputs: %w", s.Name, err)
	}
	if exit.Valid {
		v := int(exit.Int64)
		s.ExitCode = &v
	}
	s.UpdatedAt = fromTS(updated)
	s.StartedAt, s.FinishedAt = fromNullTS(started), fromNullTS(finished)
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
	err := db.write(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `INSERT INTO workflows (name, spec, state, owner_id, owner, tenant, project,
			priority, reason, generation, resubmitted_from, created_at, updated_at)
			VALUES (?, ?, 'pending', ?, COALESCE(NULLIF(?, ''), (SELECT username FROM users WHERE id = ?), ''),
			?, ?, ?, ?, 0, ?, ?, ?) RETURNING id, owner`,
			w.Name, string(w.Spec), nullID(w.OwnerID), w.Owner, w.OwnerID, w.Tenant, w.Project, w.Priority, w.Reason,
			w.ResubmittedFrom, ts(now), ts(now)).Scan(&id, &owner)
		if isForeignKey(err) {
			return fmt.Errorf("workflow owner %d: %w", w.OwnerID, controlplane.ErrNotFound)
		}
		if err != nil {
			return mapErr(err)
		}
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
		_, err = tx.ExecContext(ctx, `INSERT INTO workflow_events (workflow_id, step, from_state, to_state, reason,
			actor, at) VALUES (?, '', '', 'pending', ?, ?, ?)`, id, w.Reason, storeutil.FirstEventActor(owner), ts(now))
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
	w, err := scanWorkflow(db.r.QueryRowContext(ctx, `SELECT `+workflowCols+` FROM workflows WHERE id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("workflow %d: %w", id, err)
	}
	return w, nil
}

// ListWorkflows returns a page of workflows, newest first.
func (db *DB) ListWorkflows(ctx context.Context, f controlplane.WorkflowFilter) ([]*controlplane.Workflow, int, error) {
	var where []string
	var args []any
	if len(f.States) > 0 {
		in := "state IN ("
		for i, s := range f.States {
			if i > 0 {
				in += ", "
			}
			in += "?"
			args = append(args, string(s))
		}
		where = append(where, in+")")
	}
	if f.OwnerID != 0 {
		where, args = append(where, "owner_id = ?"), append(args, f.OwnerID)
	}
	if f.Tenant != "" {
		where, args = append(where, "tenant = ?"), append(args, f.Tenant)
	}
	if f.Query != "" {
		where, args = append(where, `name LIKE ? ESCAPE '\'`), append(args, storeutil.ContainsPattern(f.Query))
	}
	if f.Active {
		where = append(where, `(state IN ('pending', 'running') OR EXISTS (SELECT 1 FROM workflow_steps s
			WHERE s.workflow_id = workflows.id AND s.state = 'running'))`)
	}
	var out []*controlplane.Workflow
	var total int
	err := db.read(ctx, func(tx *sql.Tx) error {
		var err error
		total, err = page(ctx, tx, "workflows", where, args, "id DESC", f.Page, workflowCols, func(r *sql.Rows) error {
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
	return queryAll(ctx, db, scanStep, `SELECT `+stepCols+` FROM workflow_steps s
		LEFT JOIN tasks t ON t.id = s.task_id WHERE s.workflow_id = ? ORDER BY s.position`, workflowID)
}

// ListWorkflowEvents returns a workflow's events, oldest first.
func (db *DB) ListWorkflowEvents(ctx context.Context, workflowID int64) ([]*controlplane.WorkflowEvent, error) {
	return queryAll(ctx, db, func(r rowScanner) (*controlplane.WorkflowEvent, error) {
		var e controlplane.WorkflowEvent
		var at int64
		if err := r.Scan(&e.ID, &e.WorkflowID, &e.Step, &e.From, &e.To, &e.Reason, &e.Actor, &at); err != nil {
			return nil, mapErr(err)
		}
		e.At = fromTS(at)
		return &e, nil
	}, `SELECT id, workflow_id, step, from_state, to_state, reason, actor, at FROM workflow_events
		WHERE workflow_id = ? ORDER BY id`, workflowID)
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
		cur, err := scanWorkflow(tx.QueryRowContext(ctx, `SELECT `+workflowCols+` FROM workflows WHERE id = ?`, u.WorkflowID))
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
		out, err = scanWorkflow(tx.QueryRowContext(ctx, `UPDATE workflows SET state = ?1, updated_at = ?2,
			reason = CASE WHEN ?3 THEN ?4 ELSE reason END, generation = generation + ?5,
			started_at = CASE WHEN ?5 = 1 OR (?1 = 'running' AND started_at IS NULL) THEN ?2 ELSE started_at END,
			finished_at = CASE WHEN ?1 IN ('succeeded', 'failed', 'cancelled') THEN COALESCE(
				CASE WHEN state IN ('succeeded', 'failed', 'cancelled') THEN finished_at END, ?2) ELSE NULL END
			WHERE id = ?6 RETURNING `+workflowCols, string(to), ts(now), u.To != "", u.Reason, inc, u.WorkflowID))
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
			if n, err := res.RowsAffected(); err != nil || n == 0 {
				return stepGuardError(ctx, tx, u.WorkflowID, c, err)
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

// stepGuardError explains a step change that matched no row.
func stepGuardError(ctx context.Context, tx *sql.Tx, wf int64, c controlplane.StepChange, err error) error {
	if err != nil {
		return mapErr(err)
	}
	var state string
	err = tx.QueryRowContext(ctx, `SELECT state FROM workflow_steps WHERE workflow_id = ? AND name = ?`, wf, c.Name).Scan(&state)
	if errors.Is(err, sql.ErrNoRows) {
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
	err = db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO task_outputs (task_id, attempt, outputs) VALUES (?, ?, ?)
			ON CONFLICT (task_id, attempt) DO UPDATE SET outputs = excluded.outputs`, taskID, attempt, js)
		if isForeignKey(err) {
			return fmt.Errorf("task %d: %w", taskID, controlplane.ErrNotFound)
		}
		return mapErr(err)
	})
	return err
}

// GetTaskOutputs returns a task attempt's result values or ErrNotFound.
func (db *DB) GetTaskOutputs(ctx context.Context, taskID int64, attempt int) (map[string]string, error) {
	var js []byte
	err := db.r.QueryRowContext(ctx, `SELECT outputs FROM task_outputs WHERE task_id = ? AND attempt = ?`,
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
