package auth

import (
	"sort"

	"github.com/heteroflow/heteroflow/controlplane"
)

// Resource is what a permission protects.
type Resource string

// Action is what is done to a resource.
type Action string

// Resources, including those later subsystems will mount routes for: the
// table is the one place a role's reach is decided.
const (
	ResUsers    Resource = "users"
	ResAPIKeys  Resource = "apikeys"
	ResTasks    Resource = "tasks"
	ResAudit    Resource = "audit"
	ResSettings Resource = "settings"
	ResNodes    Resource = "nodes"
	ResMetrics  Resource = "metrics"
	ResPlugins  Resource = "plugins"
	ResQuotas   Resource = "quotas"
	ResAlerts   Resource = "alerts"
	ResBilling  Resource = "billing"
	ResClusters Resource = "clusters"
	// ResTenants: tenants, their projects and members. Writes by cluster
	// admins; tenant admins manage their own tenant's members and projects
	// through the routes' tenant rule (httpapi.TenantAdmins).
	ResTenants Resource = "tenants"
)

// Actions.
const (
	ActRead   Action = "read"
	ActWrite  Action = "write" // create / update; for metrics: ingest
	ActDelete Action = "delete"
	ActCancel Action = "cancel" // tasks; users may cancel only their own
	ActAck    Action = "ack"    // alerts
	ActReport Action = "report" // tasks: status reports from node agents
)

const (
	admin    = controlplane.RoleAdmin
	operator = controlplane.RoleOperator
	user     = controlplane.RoleUser
	viewer   = controlplane.RoleViewer
	agent    = controlplane.RoleAgent
)

// Permission names one entry of the table.
type Permission struct {
	Resource Resource
	Action   Action
}

// permissions is THE permission table. Ownership rules on top of it (a user
// sees and cancels only their own tasks; API keys are listed per owner) are
// applied by the handlers, which say so where they do.
var permissions = map[Permission][]controlplane.Role{
	{ResUsers, ActRead}:   {admin},
	{ResUsers, ActWrite}:  {admin},
	{ResUsers, ActDelete}: {admin},

	{ResAPIKeys, ActRead}:   {admin, operator},
	{ResAPIKeys, ActWrite}:  {admin, operator},
	{ResAPIKeys, ActDelete}: {admin, operator},

	{ResTasks, ActRead}:   {admin, operator, user, viewer, agent},
	{ResTasks, ActWrite}:  {admin, operator, user},
	{ResTasks, ActCancel}: {admin, operator, user},
	{ResTasks, ActReport}: {admin, operator, agent},

	{ResAudit, ActRead}: {admin, operator},

	{ResSettings, ActRead}:  {admin},
	{ResSettings, ActWrite}: {admin},

	{ResNodes, ActRead}:   {admin, operator, user, viewer},
	{ResNodes, ActWrite}:  {admin, operator, agent}, // agent: enroll, heartbeat
	{ResNodes, ActDelete}: {admin, operator},

	{ResMetrics, ActRead}:  {admin, operator, user, viewer},
	{ResMetrics, ActWrite}: {admin, agent}, // ingest

	{ResPlugins, ActRead}:  {admin, operator, user, viewer},
	{ResPlugins, ActWrite}: {admin},

	{ResQuotas, ActRead}:   {admin, operator, user, viewer},
	{ResQuotas, ActWrite}:  {admin},
	{ResQuotas, ActDelete}: {admin},

	{ResAlerts, ActRead}:   {admin, operator, user, viewer},
	{ResAlerts, ActAck}:    {admin, operator},
	{ResAlerts, ActWrite}:  {admin, operator},
	{ResAlerts, ActDelete}: {admin},

	{ResBilling, ActRead}:  {admin, operator, user, viewer}, // users: their own usage only (handlers)
	{ResBilling, ActWrite}: {admin},

	{ResTenants, ActRead}:  {admin, operator, user, viewer}, // below operator: their own tenants (handlers)
	{ResTenants, ActWrite}: {admin},

	{ResClusters, ActRead}:   {admin, operator, user, viewer},
	{ResClusters, ActWrite}:  {admin},
	{ResClusters, ActDelete}: {admin},
}

// Allowed reports whether role may perform act on res. Unknown pairs are denied.
func Allowed(role controlplane.Role, res Resource, act Action) bool {
	for _, r := range permissions[Permission{res, act}] {
		if r == role {
			return true
		}
	}
	return false
}

// Known reports whether the table has an entry for the pair, so routes
// cannot be mounted with a typo'd permission that silently denies everyone.
func Known(res Resource, act Action) bool {
	_, ok := permissions[Permission{res, act}]
	return ok
}

// Permissions returns the table sorted, for documentation and the console.
func Permissions() map[Permission][]controlplane.Role {
	out := make(map[Permission][]controlplane.Role, len(permissions))
	for p, roles := range permissions {
		out[p] = append([]controlplane.Role(nil), roles...)
	}
	return out
}

// AllRoles lists every role, for tests that walk the table.
func AllRoles() []controlplane.Role {
	return []controlplane.Role{admin, operator, user, viewer, agent}
}

// rank orders human roles; agent is outside the ladder (rank 0) so it can
// never create keys or accounts above itself.
var rank = map[controlplane.Role]int{viewer: 1, user: 2, operator: 3, admin: 4}

// AtLeast reports whether role r is min or higher on the human ladder.
func AtLeast(r, min controlplane.Role) bool { return rank[r] >= rank[min] && rank[r] > 0 }

// CanGrant reports whether a holder of r may hand out role g (to an API
// key): admins grant anything, others only roles at or below their own.
// Only admins may mint agent keys.
func CanGrant(r, g controlplane.Role) bool {
	if r == admin {
		return true
	}
	if g == agent {
		return false
	}
	return rank[g] > 0 && rank[g] <= rank[r]
}

// SortedPermissions returns the table's keys in a stable order.
func SortedPermissions() []Permission {
	keys := make([]Permission, 0, len(permissions))
	for p := range permissions {
		keys = append(keys, p)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].Resource != keys[j].Resource {
			return keys[i].Resource < keys[j].Resource
		}
		return keys[i].Action < keys[j].Action
	})
	return keys
}
