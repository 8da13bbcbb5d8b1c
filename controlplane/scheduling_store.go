package controlplane

import (
	"context"
	"encoding/json"
	"time"
)

// Allocation is one ledger row: one device slice of a task's placement
// (ARCHITECTURE.md, "Resource model"). The ledger in the store is the
// truth; the scheduler's in-memory cluster and the agents follow it.
type Allocation struct {
	ID           int64
	TaskID       int64
	Attempt      int
	NodeID       string
	DevicePos    int    // position in the node's device list (scheduler model)
	DeviceIndex  int    // the vendor's logical index (CUDA index, …)
	DeviceUUID   string // may be empty
	Vendor       string
	Model        string
	MemoryMiB    int64
	ComputeMilli int // 1000 = one whole device
	QoS          QoS
	Isolation    string // "whole", "mig", "vnpu", "hami-core", "sharing", …
	Profile      string // hardware partition profile, "" when none
	PartStart    int    // MIG start slot, -1 when none
	// Host resources of the placement are stored on its first row only.
	CPUMilli      int64
	HostMemoryMiB int64
	Tenant        string
	Project       string
	Priority      int
	// Draining rows belong to a run the scheduler has stopped (preemption,
	// defragmentation) whose end the agent has not reported yet: the
	// capacity is still in use, so it stays in the ledger until then.
	Draining  bool
	CreatedAt time.Time
}

// AllocationKey names a placement: one task attempt.
type AllocationKey struct {
	TaskID  int64
	Attempt int
}

// Binding is one placement to make durable: ledger rows, the agent's run
// assignment and the queued → scheduled transition, all or nothing.
type Binding struct {
	Allocations []*Allocation
	Assignment  *Assignment
	Transition  Transition
}

// QuotaPolicy says what admission does with a task over quota.
type QuotaPolicy string

const (
	QuotaRefuse QuotaPolicy = "refuse" // the task fails at once with the reason
	QuotaQueue  QuotaPolicy = "queue"  // the task waits until usage drops
)

// Quota bounds what one tenant (Project "") or one tenant's project may hold
// at once, in total over all its placed tasks — not per card. Vendor ""
// bounds all vendors together; a vendor name bounds that vendor's devices.
// A limit of 0 means unlimited.
type Quota struct {
	ID             int64
	Tenant         string
	Project        string
	Vendor         string
	Devices        int64
	MemoryMiB      int64
	ComputePercent int64 // Σ compute % over devices (one whole device = 100)
	Policy         QuotaPolicy
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// Validate checks a quota before it is stored.
func (q *Quota) Validate() error {
	switch {
	case q.Tenant == "":
		return Invalidf("tenant is required")
	case len(q.Tenant) > 128 || len(q.Project) > 128 || len(q.Vendor) > 64:
		return Invalidf("tenant and project are at most 128 characters, vendor 64")
	case q.Devices < 0 || q.MemoryMiB < 0 || q.ComputePercent < 0:
		return Invalidf("quota limits must not be negative (0 = unlimited)")
	}
	if err := validVendor(q.Vendor); err != nil {
		return err
	}
	if q.Policy == "" {
		q.Policy = QuotaQueue
	}
	if q.Policy != QuotaRefuse && q.Policy != QuotaQueue {
		return Invalidf("policy must be refuse or queue, not %q", q.Policy)
	}
	return nil
}

// PluginSetting is one scheduler plugin's persisted runtime setting.
type PluginSetting struct {
	Name     string
	Enabled  bool
	Weight   float64
	Position int // order in the profile, 0 first
}

// TaskSchedule is the scheduler's bookkeeping for one task: backoff, the
// last attempt's answer to "why pending", and drain state of a stopped run.
type TaskSchedule struct {
	TaskID        int64
	Attempts      int // scheduling cycles that failed for the current attempt
	NextAttemptAt time.Time
	// Why is the JSON "why pending" document of the last failed cycle.
	Why   json.RawMessage
	WhyAt *time.Time
	// Preemptions counts how often the task was preempted.
	Preemptions int
	// Final marks an end the scheduler must not retry (quota refusal,
	// queue timeout).
	Final     bool
	UpdatedAt time.Time
}

// SchedulingStore is the persistence of the scheduler: the
// allocation ledger, quotas, plugin settings, per-task scheduling state
// and the leader lease. Implemented by controlplane/sqlite and
// controlplane/postgres (both pass storetest.RunExtended and
// storetest.RunLeaseHolders); errors follow Store's contract.
type SchedulingStore interface {
	// ListTasksByState returns tasks in any of states ordered by priority
	// (highest first), then age (oldest first), at most limit. It is the
	// scheduler's read of its queues, every tick: a task's spec is decoded
	// once and then shared between reads, so its slices and maps are
	// read-only; everything a transition changes is read each time.
	ListTasksByState(ctx context.Context, states []TaskState, limit int) ([]*Task, error)

	// BindTasks makes every binding durable in one transaction: ledger
	// rows, run assignments and queued → scheduled transitions. On any
	// error (a task no longer queued: ErrConflict) nothing is written.
	BindTasks(ctx context.Context, bs []Binding) ([]*Task, error)
	// TransitionTasks applies every transition in one transaction (the
	// scheduler's admissions of a tick): all or nothing, ErrConflict or
	// ErrNotFound as TransitionTask when any one fails. The tasks both
	// return may share their spec's slices and maps with
	// ListTasksByState's (read-only).
	TransitionTasks(ctx context.Context, trs []Transition) ([]*Task, error)
	// RequeueTask applies tr (scheduled/running → queued) and marks the
	// attempt's ledger rows draining, in one transaction.
	RequeueTask(ctx context.Context, tr Transition) (*Task, error)
	// ListAllocations returns the ledger (node "" = all), by task then device.
	ListAllocations(ctx context.Context, nodeID string) ([]*Allocation, error)
	// ReleaseStale deletes the ledger rows whose task attempt is no longer
	// placed (not scheduled/running in that attempt on that node) and not
	// draining, and returns the placements it removed.
	ReleaseStale(ctx context.Context) ([]AllocationKey, error)
	// ReleaseAllocations deletes one placement's rows (a drained run).
	ReleaseAllocations(ctx context.Context, k AllocationKey) error

	// Quotas.
	CreateQuota(ctx context.Context, q *Quota) error
	GetQuota(ctx context.Context, id int64) (*Quota, error)
	ListQuotas(ctx context.Context) ([]*Quota, error)
	UpdateQuota(ctx context.Context, q *Quota) error
	DeleteQuota(ctx context.Context, id int64) error

	// Plugin settings.
	ListPluginSettings(ctx context.Context) ([]PluginSetting, error)
	// PutPluginSettings replaces every stored setting.
	PutPluginSettings(ctx context.Context, ps []PluginSetting) error

	// ListRetryable returns failed or timed-out tasks with retries left
	// (attempt < max_retries) whose end is not Final, oldest end first.
	ListRetryable(ctx context.Context, limit int) ([]*Task, error)

	// Per-task scheduling state.
	GetTaskSchedule(ctx context.Context, taskID int64) (*TaskSchedule, error)
	PutTaskSchedule(ctx context.Context, s *TaskSchedule) error

	// AcquireLease takes or renews the named lease for holder until
	// now+ttl; false when another holder's lease has not expired.
	AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (bool, error)
	// ReleaseLease gives the lease up if holder has it.
	ReleaseLease(ctx context.Context, name, holder string) error
}
