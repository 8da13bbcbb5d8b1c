package httpapi

import (
	"context"
	"sync"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/auth"
)

// Typed context keys (never strings) so no other package collides.
type ctxKey int

const (
	keyPrincipal ctxKey = iota
	keyAuthErr
	keyRequestID
	keyAudit
	keyClientIP
	keyReqInfo
)

// reqInfo is created by RequestID, outermost, and filled further in (the
// authenticated actor) so that the access log, which runs outside
// authentication, can name the caller.
type reqInfo struct {
	mu    sync.Mutex
	actor string
}

func (ri *reqInfo) setActor(a string) {
	ri.mu.Lock()
	ri.actor = a
	ri.mu.Unlock()
}

func actorOf(ctx context.Context) string {
	ri, _ := ctx.Value(keyReqInfo).(*reqInfo)
	if ri == nil {
		return "anonymous"
	}
	ri.mu.Lock()
	defer ri.mu.Unlock()
	if ri.actor == "" {
		return "anonymous"
	}
	return ri.actor
}

// PrincipalFrom returns the authenticated caller, or nil for anonymous.
func PrincipalFrom(ctx context.Context) *auth.Principal {
	p, _ := ctx.Value(keyPrincipal).(*auth.Principal)
	return p
}

// authErrFrom returns why presented credentials were rejected, if they were.
func authErrFrom(ctx context.Context) error {
	e, _ := ctx.Value(keyAuthErr).(error)
	return e
}

// RequestIDFrom returns the request's id (also in the X-Request-Id header).
func RequestIDFrom(ctx context.Context) string {
	s, _ := ctx.Value(keyRequestID).(string)
	return s
}

// ClientIP returns the caller's address as the API saw it.
func ClientIP(ctx context.Context) string {
	s, _ := ctx.Value(keyClientIP).(string)
	return s
}

// auditNote is filled by handlers while a mutating request runs and read by
// the audit middleware once the response is written.
type auditNote struct {
	mu     sync.Mutex
	module controlplane.AuditModule
	action string
	target string
	actor  string
	detail string
	errMsg string
	skip   bool
}

func noteFrom(ctx context.Context) *auditNote {
	n, _ := ctx.Value(keyAudit).(*auditNote)
	return n
}

// SetAudit names the action and target of the current request in its audit
// entry (e.g. "task.create", "task/42"). Routes that do not call it are
// audited as "<METHOD> <route pattern>".
func SetAudit(ctx context.Context, action, target string) {
	if n := noteFrom(ctx); n != nil {
		n.mu.Lock()
		n.action, n.target = action, target
		n.mu.Unlock()
	}
}

// SetAuditActor overrides the actor (login: the username tried).
func SetAuditActor(ctx context.Context, actor string) {
	if n := noteFrom(ctx); n != nil {
		n.mu.Lock()
		n.actor = actor
		n.mu.Unlock()
	}
}

// SetAuditModule overrides the module (default api; auth events use auth).
func SetAuditModule(ctx context.Context, m controlplane.AuditModule) {
	if n := noteFrom(ctx); n != nil {
		n.mu.Lock()
		n.module = m
		n.mu.Unlock()
	}
}

// SetAuditDetail attaches free text to the entry.
func SetAuditDetail(ctx context.Context, detail string) {
	if n := noteFrom(ctx); n != nil {
		n.mu.Lock()
		n.detail = detail
		n.mu.Unlock()
	}
}

func noteError(ctx context.Context, msg string) {
	if n := noteFrom(ctx); n != nil {
		n.mu.Lock()
		n.errMsg = msg
		n.mu.Unlock()
	}
}
