package httpapi

import (
	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/apitypes"
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

func newList[T, D any](rows []D, total int, p controlplane.Page, conv func(D) T) *List[T] {
	items := make([]T, 0, len(rows))
	for _, r := range rows {
		items = append(items, conv(r))
	}
	return &List[T]{Items: items, Total: total, Limit: p.Limit, Offset: p.Offset}
}

// The wire types live in controlplane/apitypes (shared with Go clients); the
// aliases keep the handlers' code short.
type (
	UserJSON          = apitypes.UserJSON
	TaskSpecJSON      = apitypes.TaskSpecJSON
	TaskJSON          = apitypes.TaskJSON
	TaskEventJSON     = apitypes.TaskEventJSON
	APIKeyJSON        = apitypes.APIKeyJSON
	AuditJSON         = apitypes.AuditJSON
	SessionJSON       = apitypes.SessionJSON
	CreatedAPIKeyJSON = apitypes.CreatedAPIKeyJSON
	HealthJSON        = apitypes.HealthJSON
	ErrorInfo         = apitypes.ErrorInfo
)

// List is the envelope of every list response.
type List[T any] = apitypes.List[T]

// Body wraps a response body for huma.
type Body[T any] struct {
	Body T
}

func userJSON(u *controlplane.User) UserJSON {
	return UserJSON{ID: u.ID, Username: u.Username, DisplayName: u.DisplayName, Email: u.Email, Role: u.Role,
		Status: u.Status, Tenant: u.Tenant, LockedUntil: u.LockedUntil, AuthSource: u.AuthSource, CreatedAt: u.CreatedAt, UpdatedAt: u.UpdatedAt}
}

// specDomain is the domain spec of a submitted one.
func specDomain(s TaskSpecJSON) controlplane.TaskSpec {
	return controlplane.TaskSpec{Name: s.Name, Command: s.Command, Image: s.Image, Args: s.Args, Env: s.Env,
		SecretEnv: s.SecretEnv, DeviceCount: s.DeviceCount, MemoryMiB: s.MemoryMiB, ComputePercent: s.ComputePercent, Vendor: s.Vendor,
		Models: s.Models, QoS: s.QoS, Priority: s.Priority, TimeoutSeconds: s.TimeoutSeconds, MaxRetries: s.MaxRetries,
		Labels: s.Labels, Tenant: s.Tenant, Project: s.Project, CPUMilli: s.CPUMilli, HostMemoryMiB: s.HostMemoryMiB,
		RDMA: s.RDMA, Gang: s.Gang, GangSize: s.GangSize, AllowBestEffort: s.AllowBestEffort}
}

func specJSON(s controlplane.TaskSpec) TaskSpecJSON {
	return TaskSpecJSON{Name: s.Name, Command: s.Command, Image: s.Image, Args: s.Args, Env: s.Env,
		DeviceCount: s.DeviceCount, MemoryMiB: s.MemoryMiB, ComputePercent: s.ComputePercent, Vendor: s.Vendor,
		Models: s.Models, QoS: s.QoS, Priority: s.Priority, TimeoutSeconds: s.TimeoutSeconds, MaxRetries: s.MaxRetries,
		Labels: s.Labels, Tenant: s.Tenant, Project: s.Project, CPUMilli: s.CPUMilli, HostMemoryMiB: s.HostMemoryMiB,
		RDMA: s.RDMA, Gang: s.Gang, GangSize: s.GangSize, AllowBestEffort: s.AllowBestEffort}
}

func taskJSON(t *controlplane.Task) TaskJSON {
	return TaskJSON{TaskSpecJSON: specJSON(t.Spec), SecretEnvKeys: sortedKeys(t.Spec.SecretEnv), ID: t.ID, State: t.State, OwnerID: t.OwnerID, Owner: t.Owner,
		Attempt: t.Attempt, NodeID: t.NodeID, ExitCode: t.ExitCode, Reason: t.Reason, CreatedAt: t.CreatedAt,
		UpdatedAt: t.UpdatedAt, StartedAt: t.StartedAt, FinishedAt: t.FinishedAt}
}

func apiKeyJSON(k *controlplane.APIKey) APIKeyJSON {
	return APIKeyJSON{ID: k.ID, Name: k.Name, Prefix: k.Prefix, Role: k.Role, OwnerID: k.OwnerID, NodeID: k.NodeID, Tenant: k.Tenant,
		CreatedAt: k.CreatedAt, LastUsedAt: k.LastUsedAt, RevokedAt: k.RevokedAt, ExpiresAt: k.ExpiresAt}
}

func auditJSON(e *controlplane.AuditEntry) AuditJSON {
	return AuditJSON{ID: e.ID, At: e.At, Actor: e.Actor, Module: e.Module, Level: e.Level, Action: e.Action,
		Target: e.Target, SourceIP: e.SourceIP, Result: e.Result, Detail: e.Detail}
}
