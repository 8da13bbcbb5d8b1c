package httpapi

import "context"

// SkipAudit leaves the current mutating request out of the audit log. For
// high-rate machine traffic that is not a user action (agent heartbeats,
// status reports), which would otherwise add a row per node every few
// seconds. Added by the agent API.
func SkipAudit(ctx context.Context) {
	if n := noteFrom(ctx); n != nil {
		n.mu.Lock()
		n.skip = true
		n.mu.Unlock()
	}
}
