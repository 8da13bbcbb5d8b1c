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
//   - everyone else sees their own tasks, plus every task of the tenants
//     where their role reaches all tasks (tenant admins and tenant
//     viewers; cluster viewers in each tenant they belong to; see
//     auth.Principal.SeesAllTasksOf). Plain members see only their own;
//   - env is shown to the owner, cluster admins and operators and the
//     task's tenant admins; never to viewers;
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
	switch {
	case p.ClusterWide():
		return true
	case p.Role == controlplane.RoleAgent:
		return p.NodeID != "" && t.NodeID == p.NodeID
	case p.KeyTenant != "" && t.Spec.Tenant != p.KeyTenant:
		return false // a tenant-scoped key sees its tenant only
	case t.OwnerID != 0 && t.OwnerID == p.UserID:
		return true
	}
	return t.Spec.Tenant != "" && p.SeesAllTasksOf(t.Spec.Tenant)
}

// TaskLogsVisible reports whether p may read t's output: whoever sees it.
func TaskLogsVisible(p *auth.Principal, t *controlplane.Task) bool { return TaskVisible(p, t) }

// taskEnvVisible reports whether p may read t's env.
func taskEnvVisible(p *auth.Principal, t *controlplane.Task) bool {
	switch {
	case p.ClusterWide():
		return true
	case p.Role == controlplane.RoleAgent || p.Role == controlplane.RoleViewer:
		return false
	case t.OwnerID == p.UserID:
		return true
	}
	return t.Spec.Tenant != "" && p.TenantRole(t.Spec.Tenant) == controlplane.TenantAdminRole
}

// scopeTaskFilter narrows a list to what p may see; ok is false when
// nothing can match.
func scopeTaskFilter(p *auth.Principal, f *controlplane.TaskFilter) (ok bool) {
	switch {
	case p.ClusterWide():
	case p.Role == controlplane.RoleAgent:
		if p.NodeID == "" {
			return false
		}
		f.NodeID = p.NodeID
	default:
		if p.KeyTenant != "" {
			if f.Tenant != "" && f.Tenant != p.KeyTenant {
				return false
			}
			f.Tenant = p.KeyTenant
		}
		f.Scope = &controlplane.TaskScope{Tenants: p.TasksTenants(), OwnerID: p.UserID}
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
