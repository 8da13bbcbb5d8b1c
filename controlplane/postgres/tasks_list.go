package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// ListTasks returns one page of tasks matching f, newest first, and the
// total. Labels must all match (jsonb containment, GIN-indexed);
// CreatedAfter is inclusive, CreatedBefore exclusive; Query is a
// case-insensitive substring of the name.
func (db *DB) ListTasks(ctx context.Context, f controlplane.TaskFilter) ([]*controlplane.Task, int, error) {
	where, a, err := taskWhere(f)
	if err != nil {
		return nil, 0, err
	}
	out := []*controlplane.Task{}
	var total int
	err = db.readTx(ctx, func(tx pgx.Tx) error {
		var err error
		total, err = page(ctx, tx, "tasks", where, a, "id DESC", f.Page, taskCols, func(rows pgx.Rows) error {
			t, err := scanTask(rows)
			if err == nil {
				out = append(out, t)
			}
			return err
		})
		return err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("list tasks: %w", err)
	}
	return out, total, nil
}

func taskWhere(f controlplane.TaskFilter) ([]string, args, error) {
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
	if len(f.Label) > 0 {
		js, err := storeutil.LabelsJSON(f.Label)
		if err != nil {
			return nil, nil, fmt.Errorf("label filter: %w", err)
		}
		where = append(where, "labels @> "+a.add(js)+"::jsonb")
	}
	if f.CreatedAfter != nil {
		where = append(where, "created_at >= "+a.add(*f.CreatedAfter))
	}
	if f.CreatedBefore != nil {
		where = append(where, "created_at < "+a.add(*f.CreatedBefore))
	}
	if f.Query != "" {
		where = append(where, `name ILIKE `+a.add(storeutil.ContainsPattern(f.Query))+` ESCAPE '\'`)
	}
	if f.NodeID != "" {
		where = append(where, "node_id = "+a.add(f.NodeID))
	}
	if f.Tenant != "" {
		where = append(where, "tenant = "+a.add(f.Tenant))
	}
	if sc := f.Scope; sc != nil {
		tenants := append([]string{}, sc.Tenants...)
		where = append(where, "(owner_id = "+a.add(sc.OwnerID)+" OR tenant = ANY("+a.add(tenants)+"::text[]))")
	}
	return where, a, nil
}
