package storesql

import (
	"context"
	"errors"
	"fmt"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// WorkflowCols are the columns ScanWorkflow reads, in order.
const WorkflowCols = `id, name, spec, state, COALESCE(owner_id, 0), owner, tenant, project, priority, reason,
	generation, resubmitted_from, created_at, updated_at, started_at, finished_at`

// ScanWorkflow reads one row of WorkflowCols.
func ScanWorkflow(d Dialect, row Row) (*controlplane.Workflow, error) {
	var w controlplane.Workflow
	if err := row.Scan(&w.ID, &w.Name, &w.Spec, &w.State, &w.OwnerID, &w.Owner, &w.Tenant, &w.Project, &w.Priority,
		&w.Reason, &w.Generation, &w.ResubmittedFrom, d.ScanTime(&w.CreatedAt), d.ScanTime(&w.UpdatedAt),
		d.ScanNullTime(&w.StartedAt), d.ScanNullTime(&w.FinishedAt)); err != nil {
		return nil, err
	}
	return &w, nil
}

func (q Queries) scanWorkflow(row Row) (*controlplane.Workflow, error) {
	return ScanWorkflow(q.db, row)
}

const stepCols = `s.workflow_id, s.name, s.step, s.item_index, s.state, COALESCE(s.task_id, 0),
	COALESCE(t.state, ''), s.generation, s.exit_code, s.outputs, s.reason, s.updated_at, s.started_at, s.finished_at`

func (q Queries) scanStep(row Row) (*controlplane.WorkflowStep, error) {
	var s controlplane.WorkflowStep
	var outputs []byte
	d := q.db
	if err := row.Scan(&s.WorkflowID, &s.Name, &s.Step, &s.Index, &s.State, &s.TaskID, &s.TaskState,
		&s.Generation, &s.ExitCode, &outputs, &s.Reason, d.ScanTime(&s.UpdatedAt), d.ScanNullTime(&s.StartedAt),
		d.ScanNullTime(&s.FinishedAt)); err != nil {
		return nil, err
	}
	var err error
	if s.Outputs, err = storeutil.DecodeOutputs(outputs); err != nil {
		return nil, fmt.Errorf("step %s outputs: %w", s.Name, err)
	}
	return &s, nil
}

// GetWorkflow returns one workflow or ErrNotFound.
func (q Queries) GetWorkflow(ctx context.Context, id int64) (*controlplane.Workflow, error) {
	w, err := q.scanWorkflow(q.db.Reader().QueryRow(ctx, `SELECT `+WorkflowCols+` FROM workflows WHERE id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("workflow %d: %w", id, err)
	}
	return w, nil
}

// WorkflowBySubmitKey: see controlplane.WorkflowStore.
func (q Queries) WorkflowBySubmitKey(ctx context.Context, ownerID int64, key string) (*controlplane.Workflow, string, error) {
	var hash string
	w, err := q.scanWorkflow(scanFirst{q.db.Reader().QueryRow(ctx, `SELECT submit_hash, `+WorkflowCols+` FROM workflows
		WHERE owner_id = $1 AND submit_key = $2`, ownerID, key), &hash})
	if err != nil {
		return nil, "", fmt.Errorf("workflow submitted with key %q: %w", key, err)
	}
	return w, hash, nil
}

// ListWorkflows returns a page of workflows, newest first.
func (q Queries) ListWorkflows(ctx context.Context, f controlplane.WorkflowFilter) ([]*controlplane.Workflow, int, error) {
	var where []string
	a := q.args()
	if len(f.States) > 0 {
		states := make([]string, len(f.States))
		for i, s := range f.States {
			states[i] = a.Add(string(s))
		}
		where = append(where, "state IN ("+joinComma(states)+")")
	}
	if f.OwnerID != 0 {
		where = append(where, "owner_id = "+a.Add(f.OwnerID))
	}
	if f.Tenant != "" {
		where = append(where, "tenant = "+a.Add(f.Tenant))
	}
	if sc := f.Scope; sc != nil {
		cond := "owner_id = " + a.Add(sc.OwnerID)
		if len(sc.Tenants) > 0 {
			cond += " OR tenant IN (" + q.inList(a, sc.Tenants) + ")"
		}
		where = append(where, "("+cond+")")
	}
	if f.Query != "" {
		where = append(where, `name `+q.db.ILike()+` `+a.Add(storeutil.ContainsPattern(f.Query))+` ESCAPE '\'`)
	}
	if f.Active {
		where = append(where, `(state IN ('pending', 'running') OR EXISTS (SELECT 1 FROM workflow_steps s
			WHERE s.workflow_id = workflows.id AND s.state = 'running'))`)
	}
	var out []*controlplane.Workflow
	var total int
	err := q.db.ReadTx(ctx, func(c Conn) error {
		var err error
		total, err = page(ctx, c, "workflows", where, a, "id DESC", f.Page, WorkflowCols, q.scanWorkflow, &out)
		return err
	})
	return out, total, err
}

// ListWorkflowSteps returns the steps in creation order with their tasks' states.
func (q Queries) ListWorkflowSteps(ctx context.Context, workflowID int64) ([]*controlplane.WorkflowStep, error) {
	return all(ctx, q.db.Reader(), q.scanStep, `SELECT `+stepCols+` FROM workflow_steps s
		LEFT JOIN tasks t ON t.id = s.task_id WHERE s.workflow_id = $1 ORDER BY s.position`, workflowID)
}

// ListWorkflowEvents returns a workflow's events, oldest first.
func (q Queries) ListWorkflowEvents(ctx context.Context, workflowID int64) ([]*controlplane.WorkflowEvent, error) {
	return all(ctx, q.db.Reader(), func(r Row) (*controlplane.WorkflowEvent, error) {
		var e controlplane.WorkflowEvent
		if err := r.Scan(&e.ID, &e.WorkflowID, &e.Step, &e.From, &e.To, &e.Reason, &e.Actor, q.db.ScanTime(&e.At)); err != nil {
			return nil, err
		}
		return &e, nil
	}, `SELECT id, workflow_id, step, from_state, to_state, reason, actor, at
		FROM workflow_events WHERE workflow_id = $1 ORDER BY id`, workflowID)
}

// StepGuardError explains a step change that matched no row.
func StepGuardError(ctx context.Context, c Conn, wf int64, sc controlplane.StepChange) error {
	var state string
	err := c.QueryRow(ctx, `SELECT state FROM workflow_steps WHERE workflow_id = $1 AND name = $2`, wf, sc.Name).Scan(&state)
	if errors.Is(err, controlplane.ErrNotFound) {
		return fmt.Errorf("workflow %d step %q: %w", wf, sc.Name, controlplane.ErrNotFound)
	}
	if err != nil {
		return err
	}
	return fmt.Errorf("%w: workflow %d step %s is %s, not %s", controlplane.ErrConflict, wf, sc.Name, state, sc.From)
}

// PutTaskOutputs records a task attempt's result values.
func (q Queries) PutTaskOutputs(ctx context.Context, taskID int64, attempt int, outputs map[string]string) error {
	js, err := storeutil.OutputsJSON(outputs)
	if err != nil {
		return err
	}
	return q.db.Write(ctx, func(c Conn) error {
		_, err := c.Exec(ctx, `INSERT INTO task_outputs (task_id, attempt, outputs) VALUES ($1, $2, $3)
			ON CONFLICT (task_id, attempt) DO UPDATE SET outputs = excluded.outputs`, taskID, attempt, js)
		if errors.Is(err, ErrForeignKey) {
			return fmt.Errorf("task %d: %w", taskID, controlplane.ErrNotFound)
		}
		return err
	})
}

// GetTaskOutputs returns a task attempt's result values or ErrNotFound.
func (q Queries) GetTaskOutputs(ctx context.Context, taskID int64, attempt int) (map[string]string, error) {
	var js []byte
	err := q.db.Reader().QueryRow(ctx, `SELECT outputs FROM task_outputs WHERE task_id = $1 AND attempt = $2`,
		taskID, attempt).Scan(&js)
	if err != nil {
		return nil, fmt.Errorf("task %d attempt %d outputs: %w", taskID, attempt, err)
	}
	m, err := storeutil.DecodeOutputs(js)
	if m == nil && err == nil {
		m = map[string]string{}
	}
	return m, err
}

// CreateWorkflow stores w (pending) and its steps (pending) with a first
// event in one transaction; the steps go in through the store's bulk insert
// (DB.InsertWorkflowSteps).
func (q Queries) CreateWorkflow(ctx context.Context, w *controlplane.Workflow, steps []*controlplane.WorkflowStep) error {
	if err := storeutil.PrepareWorkflow(w, steps); err != nil {
		return err
	}
	now := q.db.Now()
	var id int64
	var owner string
	err := q.db.Tx(ctx, func(c Conn) error {
		var key, hash *string
		if w.SubmitKey != nil {
			key, hash = &w.SubmitKey.Key, &w.SubmitKey.Hash
		}
		err := c.QueryRow(ctx, `INSERT INTO workflows (name, spec, state, owner_id, owner, tenant, project,
			priority, reason, generation, resubmitted_from, created_at, updated_at, submit_key, submit_hash)
			VALUES ($1, $2, 'pending', $3, COALESCE(NULLIF($4, ''), (SELECT username FROM users WHERE id = $5), ''),
			$6, $7, $8, $9, 0, $10, $11, $11, $12, $13) RETURNING id, owner`,
			w.Name, string(w.Spec), NullID(w.OwnerID), w.Owner, w.OwnerID, w.Tenant, w.Project, w.Priority, w.Reason,
			w.ResubmittedFrom, q.db.Time(now), key, hash).Scan(&id, &owner)
		if errors.Is(err, ErrForeignKey) {
			return fmt.Errorf("workflow owner %d: %w", w.OwnerID, controlplane.ErrNotFound)
		}
		if err != nil {
			return err
		}
		if err := q.db.InsertWorkflowSteps(ctx, c, id, steps, now); err != nil {
			return err
		}
		_, err = c.Exec(ctx, `INSERT INTO workflow_events (workflow_id, step, from_state, to_state, reason,
			actor, at) VALUES ($1, '', '', 'pending', $2, $3, $4)`, id, w.Reason, storeutil.FirstEventActor(owner), q.db.Time(now))
		return err
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
