package httpapi

import (
	"context"
	"fmt"
	"net/http"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/auth"
)

// Acting on a task or workflow (cancel; for a workflow also retry and
// resubmit) needs more than seeing it: a tenant's viewers, and the
// cluster viewers among its members, see every task of the tenant but
// submit nothing there (docs/TENANCY.md), so they must not stop or rerun
// another member's work either. Who may act: cluster admins and
// operators, the owner, and the tenant's admins.

// TaskActionable reports whether p may act on t, which it sees.
func TaskActionable(p *auth.Principal, t *controlplane.Task) bool {
	switch {
	case !TaskVisible(p, t) || p.Role == controlplane.RoleAgent:
		return false
	case p.ClusterWide():
		return true
	case t.OwnerID != 0 && t.OwnerID == p.UserID:
		return true
	}
	return t.Spec.Tenant != "" && p.TenantRole(t.Spec.Tenant) == controlplane.TenantAdminRole
}

// readOnlyIn is the refusal for a caller who sees what of tenant but may
// not act on it (403 tenant_read_only, as a viewer's submit).
func readOnlyIn(tenant, what string) error {
	return CodedError(http.StatusForbidden, CodeTenantReadOnly,
		fmt.Sprintf("you are a viewer of tenant %q: only the owner and the tenant's admins can act on %s", tenant, what))
}

// actionableTask loads task id for the caller in ctx to act on it: not
// found when the caller does not see it, tenant_read_only when it only sees.
func (a *API) actionableTask(ctx context.Context, id int64) (*controlplane.Task, error) {
	t, err := a.visibleTask(ctx, id)
	if err != nil {
		return nil, err
	}
	if !TaskActionable(PrincipalFrom(ctx), t) {
		return nil, readOnlyIn(t.Spec.Tenant, fmt.Sprintf("task %d", t.ID))
	}
	return t, nil
}
