package controlplane

import (
	"context"
	"time"
)

// Retention kinds: what a pruning pass removes, and the label of the
// pruned-rows and pruned-bytes metrics.
const (
	RetainAudit      = "audit"
	RetainTaskLogs   = "task_logs"
	RetainTaskEvents = "task_events"
	RetainSubmitKeys = "submit_keys"
)

// PruneRule bounds one kind of history. Both bounds apply: a row is due
// when it is older than Before, or when the kind holds more than its size
// bound (the oldest rows go first).
type PruneRule struct {
	// Before: rows older than this are due (for task logs and task events:
	// those of tasks that finished before it). Zero: no age bound.
	Before time.Time
	// MaxRows keeps at most this many rows (audit entries, task events);
	// 0: no row bound.
	MaxRows int64
	// MaxBytes keeps at most this many bytes of log data (task logs);
	// 0: no byte bound.
	MaxBytes int64
	// Limit is the most one call removes: rows for the audit log and task
	// events, tasks (all of a task's log chunks at once) for task logs, so
	// that one call holds the write lock only briefly. Required (> 0).
	Limit int
}

// Pruned is what one call removed: rows (log chunks for task logs) and the
// bytes their text and data held.
type Pruned struct {
	Rows  int64
	Bytes int64
}

// RetentionStore removes history that outlived its retention, never what
// live work still needs:
//
//   - task logs and task events only of tasks in a terminal state
//     (TaskState.Terminal), never of a task that is submitted, queued,
//     scheduled or running, nor of a task an open (not RESOLVED) alert
//     names in its task_id label;
//   - audit entries never when their target is such a task ("task/<id>")
//     or an open alert ("alert/<id>").
//
// Protected rows count towards a size bound but are never removed, so a
// kind may stay above its bound while its rows are still needed. Each call
// removes at most rule.Limit and reports what it removed; callers repeat
// until a call removes nothing. ErrInvalid when rule.Limit < 1.
type RetentionStore interface {
	PruneAudit(ctx context.Context, rule PruneRule) (Pruned, error)
	PruneTaskLogs(ctx context.Context, rule PruneRule) (Pruned, error)
	PruneTaskEvents(ctx context.Context, rule PruneRule) (Pruned, error)
	// PruneSubmitKeys clears the idempotency keys of tasks, workflows and
	// forwarded (hub) tasks created before rule.Before (at most rule.Limit
	// of each), so that a client may use a key again; the records stay.
	// Rows counts the keys cleared.
	PruneSubmitKeys(ctx context.Context, rule PruneRule) (Pruned, error)
}

// TerminalTaskStates are the states TaskState.Terminal accepts, for stores
// that select by state in SQL.
var TerminalTaskStates = []TaskState{TaskSucceeded, TaskFailed, TaskCancelled, TaskTimedOut}
