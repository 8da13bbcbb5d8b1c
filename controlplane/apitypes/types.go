// Package apitypes holds the REST API's wire types: the bodies the server's
// HTTP layer (controlplane/httpapi) writes and reads, and that Go clients
// (controlplane/client, the CLI) decode, so clients depend on the contract
// and not on the server package. The OpenAPI document is generated from
// these types.
package apitypes

import (
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
)

// List is the envelope of every list response.
type List[T any] struct {
	Items  []T `json:"items"`
	Total  int `json:"total"`
	Limit  int `json:"limit"`
	Offset int `json:"offset"`
}

// UserJSON is a user as clients see it (never the password hash).
type UserJSON struct {
	ID          int64                   `json:"id"`
	Username    string                  `json:"username"`
	DisplayName string                  `json:"display_name"`
	Email       string                  `json:"email"`
	Role        controlplane.Role       `json:"role" enum:"admin,operator,user,viewer,agent"`
	Status      controlplane.UserStatus `json:"status" enum:"active,pending,disabled"`
	Tenant      string                  `json:"tenant"`
	LockedUntil *time.Time              `json:"locked_until,omitempty" doc:"Set while a login lockout is in force"`
	AuthSource  string                  `json:"auth_source,omitempty" doc:"Where the account signs in: empty for a local password, ldap, or oidc:<provider>"`
	CreatedAt   time.Time               `json:"created_at"`
	UpdatedAt   time.Time               `json:"updated_at"`
}

// TaskSpecJSON is what a client submits.
type TaskSpecJSON struct {
	Name           string            `json:"name" maxLength:"253" doc:"Task name"`
	Command        []string          `json:"command,omitempty" doc:"argv; command or image is required"`
	Image          string            `json:"image,omitempty"`
	Args           []string          `json:"args,omitempty"`
	Env            map[string]string `json:"env,omitempty" doc:"Environment; readable by the owner, operators and admins"`
	SecretEnv      map[string]string `json:"secret_env,omitempty" writeOnly:"true" doc:"Secret environment: handed only to the agent that runs the task, never returned"`
	DeviceCount    int               `json:"device_count,omitempty" doc:"Accelerators wanted (0 = CPU only)"`
	MemoryMiB      int               `json:"memory_mib,omitempty" doc:"Device memory per device, MiB"`
	ComputePercent int               `json:"compute_percent,omitempty" doc:"Compute share per device, 10–100"`
	Vendor         string            `json:"vendor,omitempty"`
	Models         []string          `json:"models,omitempty"`
	QoS            controlplane.QoS  `json:"qos,omitempty" doc:"gold, silver or bronze (default bronze)"`
	Priority       int               `json:"priority,omitempty" doc:"0–1000, higher first"`
	TimeoutSeconds int               `json:"timeout_seconds,omitempty"`
	MaxRetries     int               `json:"max_retries,omitempty"`
	Labels         map[string]string `json:"labels,omitempty"`
	Tenant         string            `json:"tenant,omitempty"`
	Project        string            `json:"project,omitempty"`
	CPUMilli       int               `json:"cpu_milli,omitempty"`
	HostMemoryMiB  int               `json:"host_memory_mib,omitempty"`
	RDMA           bool              `json:"rdma,omitempty"`
	Gang           string            `json:"gang,omitempty"`
	GangSize       int               `json:"gang_size,omitempty"`
	// AllowBestEffort: a Silver task may run unenforced where nothing
	// enforces Silver, when no enforcing device can take it.
	AllowBestEffort bool `json:"allow_best_effort,omitempty" doc:"Silver only: when no device that enforces Silver (CUDA MPS, HAMi-core, vendor limits) can take the task, run it best-effort (shared, limits not enforced) on one that cannot; the placement event says so"`
	// WaitForNodes is read at submit time only: accept a task no node of
	// the cluster can ever hold, to wait for nodes still to come.
	WaitForNodes bool `json:"wait_for_nodes,omitempty" doc:"Submit only: queue the task even if no node in the cluster can ever hold it (otherwise 400 never_fits)"`
}

// TaskJSON is a stored task: the spec fields plus lifecycle bookkeeping.
type TaskJSON struct {
	TaskSpecJSON
	// EnvHidden says env was withheld from this caller (viewers, agents).
	EnvHidden bool `json:"env_hidden,omitempty" doc:"true when env is withheld from the caller"`
	// SecretEnvKeys names the secret variables set; values are never returned.
	SecretEnvKeys []string               `json:"secret_env_keys,omitempty" doc:"Names of the secret variables (values are never returned)"`
	ID            int64                  `json:"id"`
	State         controlplane.TaskState `json:"state"`
	OwnerID       int64                  `json:"owner_id"`
	Owner         string                 `json:"owner"`
	Attempt       int                    `json:"attempt"`
	NodeID        string                 `json:"node_id"`
	ExitCode      *int                   `json:"exit_code"`
	Reason        string                 `json:"reason"`
	CreatedAt     time.Time              `json:"created_at"`
	UpdatedAt     time.Time              `json:"updated_at"`
	StartedAt     *time.Time             `json:"started_at"`
	FinishedAt    *time.Time             `json:"finished_at"`
}

// TaskEventJSON is one state transition.
type TaskEventJSON struct {
	ID     int64                  `json:"id"`
	From   controlplane.TaskState `json:"from"`
	To     controlplane.TaskState `json:"to"`
	Reason string                 `json:"reason"`
	Actor  string                 `json:"actor"`
	At     time.Time              `json:"at"`
}

// APIKeyJSON is an API key without its secret.
type APIKeyJSON struct {
	ID         int64             `json:"id"`
	Name       string            `json:"name"`
	Prefix     string            `json:"prefix"`
	Role       controlplane.Role `json:"role"`
	OwnerID    int64             `json:"owner_id"`
	NodeID     string            `json:"node_id"`
	Tenant     string            `json:"tenant,omitempty" doc:"The one tenant a scoped key acts in"`
	CreatedAt  time.Time         `json:"created_at"`
	LastUsedAt *time.Time        `json:"last_used_at"`
	RevokedAt  *time.Time        `json:"revoked_at"`
	ExpiresAt  *time.Time        `json:"expires_at"`
}

// AuditJSON is one audit-log row.
type AuditJSON struct {
	ID       int64                    `json:"id"`
	At       time.Time                `json:"at"`
	Actor    string                   `json:"actor"`
	Module   controlplane.AuditModule `json:"module"`
	Level    controlplane.AuditLevel  `json:"level"`
	Action   string                   `json:"action"`
	Target   string                   `json:"target"`
	SourceIP string                   `json:"source_ip"`
	Result   string                   `json:"result"`
	Detail   string                   `json:"detail"`
}

// SessionJSON is the answer to login and refresh.
type SessionJSON struct {
	AccessToken  string   `json:"access_token"`
	RefreshToken string   `json:"refresh_token"`
	TokenType    string   `json:"token_type" enum:"Bearer"`
	ExpiresIn    int      `json:"expires_in" doc:"Access token lifetime in seconds"`
	User         UserJSON `json:"user"`
}

// CreatedAPIKeyJSON carries the key itself, shown this once.
type CreatedAPIKeyJSON struct {
	APIKeyJSON
	Key string `json:"key" doc:"hf_<prefix>_<secret>; store it now, it is not shown again"`
}

// HealthJSON is the body of /health, /health/ready and /health/live.
// Checks and Version are present only for admins and operators.
type HealthJSON struct {
	Status  string            `json:"status" enum:"ok,degraded"`
	Checks  map[string]string `json:"checks,omitempty" doc:"Per check: ok or the error (admins and operators only)"`
	Version string            `json:"version,omitempty"`
}

// ErrorInfo is the body of every error: {"error":{"code","message"}}.
type ErrorInfo struct {
	Code    string `json:"code" doc:"Machine-readable code, e.g. invalid_argument, forbidden"`
	Message string `json:"message" doc:"Human-readable reason"`
	// Params are the values the message names, for clients that show the
	// reason of a coded error in their own language.
	Params map[string]string `json:"params,omitempty" doc:"Values the message names (e.g. name, detail), keyed for translation"`
}
