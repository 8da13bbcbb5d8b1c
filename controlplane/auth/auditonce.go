package auth

import (
	"sync"
	"time"
)

// SuccessAuditPeriod is how often a successful authentication by the same
// API key (or refresh of the same user's session) is written to the audit
// log: once per period, so agents' heartbeats and consoles' token refreshes
// do not flood it. Failures are always recorded.
const SuccessAuditPeriod = time.Hour

// auditOnce remembers when each subject's success was last audited.
type auditOnce struct {
	mu   sync.Mutex
	last map[string]time.Time
}

// due reports whether subject's success should be audited at now, and
// marks it audited when it is.
func (o *auditOnce) due(subject string, now time.Time) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.last == nil {
		o.last = map[string]time.Time{}
	}
	if t, ok := o.last[subject]; ok && now.Sub(t) < SuccessAuditPeriod {
		return false
	}
	if len(o.last) > 100_000 {
		for k, t := range o.last {
			if now.Sub(t) >= SuccessAuditPeriod {
				delete(o.last, k)
			}
		}
	}
	o.last[subject] = now
	return true
}

// SuccessAuditDue reports whether a successful authentication of subject
// (e.g. "refresh:user/7") is to be audited now; see SuccessAuditPeriod.
func (s *Service) SuccessAuditDue(subject string) bool { return s.audited.due(subject, s.cfg.Now()) }
