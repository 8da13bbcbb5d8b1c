package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// ListTasks returns one page of tasks matching f, newest first, and the
// total. Labels must all match; CreatedAfter is inclusive, CreatedBefore
// exclusive; Query is a case-insensitive substring of the name.
func (db *DB) ListTasks(ctx context.Context, f controlplane.TaskFilter) ([]*controlplane.Task, int, error) {
	where, args := taskWhere(f)
	out := []*controlplane.Task{}
	var total int
	err := db.read(ctx, func(tx *sql.Tx) error {
		var err error
		total, err = page(ctx, tx, "tasks", where, args, "id DESC", f.Page, taskCols, func(rows *sql.Rows) error {
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

func taskWhere(f controlplane.TaskFilter) ([]string, []any) {
	var where []string
	var args []any
	if len(f.States) > 0 {
		marks := strings.TrimSuffix(strings.Repeat("?, ", len(f.States)), ", ")
		where = append(where, "state IN ("+marks+")")
		for _, s := range f.States {
			args = append(args, s)
		}
	}
	if f.OwnerID != 0 {
		where, args = append(where, "owner_id = ?"), append(args, f.OwnerID)
	}
	// Sorted keys keep the statement text stable for a given filter shape.
	keys := make([]string, 0, len(f.Label))
	for k := range f.Label {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		where = append(where, "EXISTS (SELECT 1 FROM json_each(tasks.labels) WHERE key = ? AND value = ?)")
		args = append(args, k, f.Label[k])
	}
	if f.CreatedAfter != nil {
		where, args = append(where, "created_at >= ?"), append(args, ts(*f.CreatedAfter))
	}
	if f.CreatedBefore != nil {
		where, args = append(where, "created_at < ?"), append(args, ts(*f.CreatedBefore))
	}
	if f.Query != "" {
		where, args = append(where, `name LIKE ? ESCAPE '\'`), append(args, storeutil.ContainsPattern(f.Query))
	}
	if f.Tenant != "" {
		where, args = append(where, "tenant = ?"), append(args, f.Tenant)
	}
	if f.NodeID != "" {
		where, args = append(where, "node_id = ?"), append(args, f.NodeID)
	}
	if sc := f.Scope; sc != nil {
		cond := "owner_id = ?"
		args = append(args, sc.OwnerID)
		if len(sc.Tenants) > 0 {
			cond += " OR tenant IN (" + strings.TrimSuffix(strings.Repeat("?, ", len(sc.Tenants)), ", ") + ")"
			for _, t := range sc.Tenants {
				args = append(args, t)
			}
		}
		where = append(where, "("+cond+")")
	}
	return where, args
}
