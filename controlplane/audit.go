package controlplane

import "time"

// AuditLevel follows the brief's log levels.
type AuditLevel string

const (
	LevelDebug AuditLevel = "DEBUG"
	LevelInfo  AuditLevel = "INFO"
	LevelWarn  AuditLevel = "WARN"
	LevelError AuditLevel = "ERROR"
)

// AuditModule names the part of the platform that acted.
type AuditModule string

const (
	ModuleAPI       AuditModule = "api"
	ModuleAuth      AuditModule = "auth"
	ModuleScheduler AuditModule = "scheduler"
	ModuleAgent     AuditModule = "agent"
	ModulePlugin    AuditModule = "plugin"
)

// AuditEntry is one row of the audit log: every mutating call and every
// authentication event.
type AuditEntry struct {
	ID       int64
	At       time.Time
	Actor    string // username, "apikey:<prefix>", or "system"
	Module   AuditModule
	Level    AuditLevel
	Action   string // e.g. "task.create", "auth.login"
	Target   string // e.g. "task/42"
	SourceIP string
	Result   string // "ok", "denied", "failed: <reason>"
	Detail   string
}

// AuditFilter narrows ListAudit; Query matches action, target, actor or detail.
type AuditFilter struct {
	Module AuditModule
	Level  AuditLevel
	Actor  string
	Since  *time.Time
	Until  *time.Time
	Query  string
	Page   Page
}
