package httpapi

import (
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
)

// Request/response types are kept apart from the domain types so the wire
// format is explicit (and the OpenAPI document is generated from them).

// PageParams are the pagination query parameters of every list.
type PageParams struct {
	Limit  int `query:"limit" minimum:"0" maximum:"1000" doc:"Page size (default 50, max 1000)"`
	Offset int `query:"offset" minimum:"0" doc:"Rows to skip"`
}

func (p PageParams) page() controlplane.Page {
	return controlplane.Page{Limit: p.Limit, Offset: p.Offset}.Normalize()
}

// List is the envelope of every list response.
type List[T any] struct {
	Items  []T `json:"items"`
	Total  int `json:"total"`
	Limit  int `json:"limit"`
	Offset int `json:"offset"`
}

func newList[T, D any](rows []D, total int, p controlplane.Page, conv func(D) T) *List[T] {
	items := make([]T, 0, len(rows))
	for _, r := range rows {
		items = append(items, conv(r))
	}
	return &List[T]{Items: items, Total: total, Limit: p.Limit, Offset: p.Offset}
}

// Body wraps a response body for huma.
type Body[T any] struct {
	Body T
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
	CreatedAt   time.Time               `json:"created_at"`
	UpdatedAt   time.Time               `json:"updated_at"`
}

func userJSON(u *controlplane.User) UserJSON {
	return UserJSON{ID: u.ID, Username: u.Username, DisplayName: u.DisplayName, Email: u.Email, Role: u.Role,
		Status: u.Status, Tenant: u.Tenant, LockedUntil: u.LockedUntil, CreatedAt: u.CreatedAt, UpdatedAt: u.UpdatedAt}
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
}

func (s TaskSpecJSON) domain() controlplane.TaskSpec {
	return controlplane.TaskSpec{Name: s.Name, Command: s.Command, Image: s.Image, Args: s.Args, Env: s.Env,
		SecretEnv: s.SecretEnv, DeviceCount: s.DeviceCount, MemoryMiB: s.MemoryMiB, ComputePercent: s.ComputePercent, Vendor: s.Vendor,
		Models: s.Models, QoS: s.QoS, Priority: s.Priority, TimeoutSeconds: s.TimeoutSeconds, MaxRetries: s.MaxRetries,
		Labels: s.Labels, Tenant: s.Tenant, Project: s.Project, CPUMilli: s.CPUMilli, HostMemoryMiB: s.HostMemoryMiB,
		RDMA: s.RDMA, Gang: s.Gang, GangSize: s.GangSize}
}

func specJSON(s controlplane.TaskSpec) TaskSpecJSON {
	return TaskSpecJSON{Name: s.Name, Command: s.Command, Image: s.Image, Args: s.Args, Env: s.Env,
		DeviceCount: s.DeviceCount, MemoryMiB: s.MemoryMiB, ComputePercent: s.ComputePercent, Vendor: s.Vendor,
		Models: s.Models, QoS: s.QoS, Priority: s.Priority, TimeoutSeconds: s.TimeoutSeconds, MaxRetries: s.MaxRetries,
		Labels: s.Labels, Tenant: s.Tenant, Project: s.Project, CPUMilli: s.CPUMilli, HostMemoryMiB: s.HostMemoryMiB,
		RDMA: s.RDMA, Gang: s.Gang, GangSize: s.GangSize}
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

func taskJSON(t *controlplane.Task) TaskJSON {
	return TaskJSON{TaskSpecJSON: specJSON(t.Spec), SecretEnvKeys: sortedKeys(t.Spec.SecretEnv), ID: t.ID, State: t.State, OwnerID: t.OwnerID, Owner: t.Owner,
		Attempt: t.Attempt, NodeID: t.NodeID, ExitCode: t.ExitCode, Reason: t.Reason, CreatedAt: t.CreatedAt,
		UpdatedAt: t.UpdatedAt, StartedAt: t.StartedAt, FinishedAt: t.FinishedAt}
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
	CreatedAt  time.Time         `json:"created_at"`
	LastUsedAt *time.Time        `json:"last_used_at"`
	RevokedAt  *time.Time        `json:"revoked_at"`
	ExpiresAt  *time.Time        `json:"expires_at"`
}

func apiKeyJSON(k *controlplane.APIKey) APIKeyJSON {
	return APIKeyJSON{ID: k.ID, Name: k.Name, Prefix: k.Prefix, Role: k.Role, OwnerID: k.OwnerID, NodeID: k.NodeID,
		CreatedAt: k.CreatedAt, LastUsedAt: k.LastUsedAt, RevokedAt: k.RevokedAt, ExpiresAt: k.ExpiresAt}
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

func auditJSON(e *controlplane.AuditEntry) AuditJSON {
	return AuditJSON{ID: e.ID, At: e.At, Actor: e.Actor, Module: e.Module, Level: e.Level, Action: e.Action,
		Target: e.Target, SourceIP: e.SourceIP, Result: e.Result, Detail: e.Detail}
}
