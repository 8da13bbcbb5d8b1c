package storesql

import (
	"context"
	"fmt"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// Task reads. Submitting (a bulk insert) and transitions (PostgreSQL: the
// guarded update and its event in one statement) stay in each store.

// TaskCols are the columns ScanTask reads, in order: those a transition
// changes, then the spec (written once, by the insert).
const TaskCols = TaskStateCols + `, ` + taskSpecFields

// ScanTask reads one row of TaskCols.
func ScanTask(d Dialect, row Row) (*controlplane.Task, error) {
	var t controlplane.Task
	var raw rawSpec
	if err := row.Scan(append(taskStateDest(d, &t), raw.dest(&t.Spec)...)...); err != nil {
		return nil, err
	}
	if err := raw.decode(t.ID, &t.Spec); err != nil {
		return nil, err
	}
	return &t, nil
}

func (q Queries) scanTask(row Row) (*controlplane.Task, error) { return ScanTask(q.db, row) }

// GetTask returns the task with id or ErrNotFound.
func (q Queries) GetTask(ctx context.Context, id int64) (*controlplane.Task, error) {
	t, err := q.scanTask(q.db.Reader().QueryRow(ctx, `SELECT `+TaskCols+` FROM tasks WHERE id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("task %d: %w", id, err)
	}
	return t, nil
}

// TaskBySubmitKey: see controlplane.Store.
func (q Queries) TaskBySubmitKey(ctx context.Context, ownerID int64, key string) (*controlplane.Task, string, error) {
	var hash string
	t, err := q.scanTask(scanFirst{q.db.Reader().QueryRow(ctx, `SELECT submit_hash, `+TaskCols+` FROM tasks
		WHERE owner_id = $1 AND submit_key = $2`, ownerID, key), &hash})
	if err != nil {
		return nil, "", fmt.Errorf("task submitted with key %q: %w", key, err)
	}
	return t, hash, nil
}

// scanFirst scans one leading column into first, the rest into the
// caller's destinations.
type scanFirst struct {
	row   Row
	first *string
}

func (s scanFirst) Scan(dest ...any) error {
	return s.row.Scan(append([]any{s.first}, dest...)...)
}

// ListTaskEvents returns the task's events oldest first; ErrNotFound when the
// task does not exist.
func (q Queries) ListTaskEvents(ctx context.Context, taskID int64) ([]*controlplane.TaskEvent, error) {
	var out []*controlplane.TaskEvent
	err := q.db.ReadTx(ctx, func(c Conn) error {
		var err error
		out, err = all(ctx, c, func(r Row) (*controlplane.TaskEvent, error) {
			var e controlplane.TaskEvent
			err := r.Scan(&e.ID, &e.TaskID, &e.From, &e.To, &e.Reason, &e.Actor, q.db.ScanTime(&e.At))
			return &e, err
		}, `SELECT id, task_id, from_state, to_state, reason, actor, at FROM task_events WHERE task_id = $1 ORDER BY id`, taskID)
		if err != nil || len(out) > 0 {
			return err
		}
		// Retention may have removed a finished task's events: no events
		// is an empty history unless the task itself is missing.
		var one int
		return c.QueryRow(ctx, `SELECT 1 FROM tasks WHERE id = $1`, taskID).Scan(&one)
	})
	if err != nil {
		return nil, fmt.Errorf("events of task %d: %w", taskID, err)
	}
	return out, nil
}

// ListTasks returns one page of tasks matching f, newest first, and the
// total. Labels must all match; CreatedAfter is inclusive, CreatedBefore
// exclusive; Query is a case-insensitive substring of the name.
func (q Queries) ListTasks(ctx context.Context, f controlplane.TaskFilter) ([]*controlplane.Task, int, error) {
	where, a, err := q.taskWhere(f)
	if err != nil {
		return nil, 0, err
	}
	out := []*controlplane.Task{}
	var total int
	err = q.db.ReadTx(ctx, func(c Conn) error {
		var err error
		total, err = page(ctx, c, "tasks", where, a, "id DESC", f.Page, TaskCols, q.scanTask, &out)
		return err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("list tasks: %w", err)
	}
	return out, total, nil
}

func (q Queries) taskWhere(f controlplane.TaskFilter) ([]string, *storeutil.Args, error) {
	var where []string
	a := q.args()
	if len(f.States) > 0 {
		where = append(where, "state IN ("+q.inList(a, f.States)+")")
	}
	if f.OwnerID != 0 {
		where = append(where, "owner_id = "+a.Add(f.OwnerID))
	}
	if len(f.Label) > 0 {
		conds, err := q.db.LabelsContain(a, "tasks.labels", f.Label)
		if err != nil {
			return nil, nil, fmt.Errorf("label filter: %w", err)
		}
		where = append(where, conds...)
	}
	if f.CreatedAfter != nil {
		where = append(where, "created_at >= "+a.AddTime(*f.CreatedAfter))
	}
	if f.CreatedBefore != nil {
		where = append(where, "created_at < "+a.AddTime(*f.CreatedBefore))
	}
	if f.Query != "" {
		where = append(where, `name `+q.db.ILike()+` `+a.Add(storeutil.ContainsPattern(f.Query))+` ESCAPE '\'`)
	}
	if f.NodeID != "" {
		where = append(where, "node_id = "+a.Add(f.NodeID))
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
	return where, a, nil
}

// inList adds vs to a and returns their placeholders, comma-separated.
func (q Queries) inList(a *storeutil.Args, vs any) string {
	var ph []string
	switch vs := vs.(type) {
	case []controlplane.TaskState:
		for _, v := range vs {
			ph = append(ph, a.Add(string(v)))
		}
	case []string:
		for _, v := range vs {
			ph = append(ph, a.Add(v))
		}
	case []int64:
		for _, v := range vs {
			ph = append(ph, a.Add(v))
		}
	}
	return joinComma(ph)
}

// ListTasksByState: see controlplane.SchedulingStore.
func (q Queries) ListTasksByState(ctx context.Context, states []controlplane.TaskState, limit int) ([]*controlplane.Task, error) {
	if len(states) == 0 {
		return nil, nil
	}
	a := q.args()
	in := q.inList(a, states)
	tasks, err := all(ctx, q.db.Reader(), func(r Row) (*controlplane.Task, error) { return ScanTaskState(q.db, r) },
		`SELECT `+TaskStateCols+` FROM tasks WHERE state IN (`+in+`)
		ORDER BY priority DESC, created_at, id LIMIT `+a.Add(storeutil.ListLimit(limit)), a.Vals...)
	if err != nil {
		return nil, err
	}
	return q.withSpecs(ctx, tasks) // specs decoded once per task (taskspeccache.go)
}

// ListRetryable: see controlplane.SchedulingStore.
func (q Queries) ListRetryable(ctx context.Context, limit int) ([]*controlplane.Task, error) {
	return all(ctx, q.db.Reader(), q.scanTask, `SELECT `+TaskCols+` FROM tasks WHERE state IN ('failed', 'timed_out')
		AND attempt < max_retries AND NOT EXISTS (SELECT 1 FROM task_schedule s WHERE s.task_id = tasks.id AND s.final)
		ORDER BY finished_at, id LIMIT $1`, storeutil.ListLimit(limit))
}
