package httpapi

import (
	"context"
	"fmt"
	"sort"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/auth"
)

// Who may see which task, one policy for every task route (get, list,
// events, why, logs):
//
//   - admins and operators see every task, its env and its logs;
//   - a user sees only their own tasks, with env and logs;
//   - a viewer with a tenant sees that tenant's tasks; a viewer without a
//     tenant observes every task. Viewers never see env, and read logs only
//     of tasks in their own tenant (a tenant-less viewer: tasks without one);
//   - an agent key sees only the tasks placed on its own node, without env
//     (its agent receives env and secret_env in the assignment), with logs.
//
// secret_env is returned to nobody. Tasks a caller may not see are "not
// found", so their IDs are not confirmed.

// TaskVisible reports whether p may see t at all.
func TaskVisible(p *auth.Principal, t *controlplane.Task) bool {
	if p == nil {
		return false
	}
	switch p.Role {
	case controlplane.RoleAdmin, controlplane.RoleOperator:
		return true
	case controlplane.RoleUser:
		return t.OwnerID == p.UserID
	case controlplane.RoleViewer:
		return p.Tenant == "" || t.Spec.Tenant == p.Tenant
	case controlplane.RoleAgent:
		return p.NodeID != "" && t.NodeID == p.NodeID
	}
	return false
}

// TaskLogsVisible reports whether p may read t's output.
func TaskLogsVisible(p *auth.Principal, t *controlplane.Task) bool {
	if !TaskVisible(p, t) {
		return false
	}
	if p.Role == controlplane.RoleViewer {
		return t.Spec.Tenant == p.Tenant
	}
	return true
}

// taskEnvVisible reports whether p may read t's env.
func taskEnvVisible(p *auth.Principal, t *controlplane.Task) bool {
	switch p.Role {
	case controlplane.RoleAdmin, controlplane.RoleOperator:
		return true
	case controlplane.RoleUser:
		return t.OwnerID == p.UserID
	}
	return false
}

// scopeTaskFilter narrows a list to what p may see; ok is false when
// nothing can match (a viewer asking for another tenant).
func scopeTaskFilter(p *auth.Principal, f *controlplane.TaskFilter) (ok bool) {
	switch p.Role {
	case controlplane.RoleUser:
		f.OwnerID = p.UserID
	case controlplane.RoleViewer:
		if p.Tenant != "" {
			if f.Tenant != "" && f.Tenant != p.Tenant {
				return false
			}
			f.Tenant = p.Tenant
		}
	case controlplane.RoleAgent:
		if p.NodeID == "" {
			return false
		}
		f.NodeID = p.NodeID
	}
	return true
}

// LoadVisibleTask loads task id for the caller in ctx, or ErrNotFound when
// it does not exist or the caller may not see it (logs: its output).
func LoadVisibleTask(ctx context.Context, store controlplane.Store, id int64, logs bool) (*controlplane.Task, error) {
	t, err := store.GetTask(ctx, id)
	if err != nil {
		return nil, err
	}
	p := PrincipalFrom(ctx)
	if !TaskVisible(p, t) || (logs && !TaskLogsVisible(p, t)) {
		return nil, fmt.Errorf("%w: task %d", controlplane.ErrNotFound, id)
	}
	return t, nil
}

// taskJSONFor is t as p may see it.
func taskJSONFor(p *auth.Principal, t *controlplane.Task) TaskJSON {
	out := taskJSON(t)
	if !taskEnvVisible(p, t) && len(out.Env) > 0 {
		out.Env, out.EnvHidden = nil, true
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	if len(m) == 0 {
		return nil
	}
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
