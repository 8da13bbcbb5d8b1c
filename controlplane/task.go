package controlplane

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// TaskState is a task's lifecycle state. Legal moves are in one table,
// taskTransitions, checked by CanTransition (and enforced by the stores).
type TaskState string

const (
	TaskSubmitted TaskState = "submitted"
	TaskQueued    TaskState = "queued"
	TaskScheduled TaskState = "scheduled"
	TaskRunning   TaskState = "running"
	TaskSucceeded TaskState = "succeeded"
	TaskFailed    TaskState = "failed"
	TaskCancelled TaskState = "cancelled"
	TaskTimedOut  TaskState = "timed_out"
)

// AllTaskStates in lifecycle order.
var AllTaskStates = []TaskState{TaskSubmitted, TaskQueued, TaskScheduled, TaskRunning,
	TaskSucceeded, TaskFailed, TaskCancelled, TaskTimedOut}

// taskTransitions is the one place that says which state may follow which.
// failed/timed_out → queued is the retry path (bounded by MaxRetries);
// scheduled/running → queued is a requeue (preemption, lost node).
var taskTransitions = map[TaskState][]TaskState{
	TaskSubmitted: {TaskQueued, TaskCancelled, TaskFailed},
	TaskQueued:    {TaskScheduled, TaskCancelled, TaskTimedOut, TaskFailed},
	TaskScheduled: {TaskRunning, TaskQueued, TaskCancelled, TaskFailed, TaskTimedOut, TaskSucceeded},
	TaskRunning:   {TaskSucceeded, TaskFailed, TaskCancelled, TaskTimedOut, TaskQueued},
	TaskFailed:    {TaskQueued},
	TaskTimedOut:  {TaskQueued},
}

// CanTransition reports whether from → to is a legal move.
func CanTransition(from, to TaskState) bool {
	for _, s := range taskTransitions[from] {
		if s == to {
			return true
		}
	}
	return false
}

// Terminal reports whether no further transition is possible without a retry.
func (s TaskState) Terminal() bool {
	switch s {
	case TaskSucceeded, TaskFailed, TaskCancelled, TaskTimedOut:
		return true
	}
	return false
}

// Valid reports whether s is a known state.
func (s TaskState) Valid() bool {
	for _, k := range AllTaskStates {
		if k == s {
			return true
		}
	}
	return false
}

// QoS is the isolation tier a task asks for (see ARCHITECTURE.md).
type QoS string

const (
	QoSGold   QoS = "gold"   // hardware partition or whole device
	QoSSilver QoS = "silver" // driver-level limits
	QoSBronze QoS = "bronze" // software sharing, may overcommit
)

// Valid reports whether q is a known tier.
func (q QoS) Valid() bool { return q == QoSGold || q == QoSSilver || q == QoSBronze }

// TaskSpec is what a user submits. Validate checks every field.
type TaskSpec struct {
	Name    string
	Command []string // argv; either Command or Image is required
	Image   string
	Args    []string
	Env     map[string]string
	// SecretEnv is environment the task needs but nobody else may read
	// (tokens, passwords): stored with the task, handed only to the agent
	// that runs it, never returned by the API.
	SecretEnv      map[string]string
	DeviceCount    int // 0 = CPU-only task
	MemoryMiB      int // per device
	ComputePercent int // per device, 10–100
	Vendor         string
	Models         []string // allowed models (empty = any)
	QoS            QoS
	Priority       int // higher runs first; 0–1000
	TimeoutSeconds int // 0 = none
	MaxRetries     int
	Labels         map[string]string
	Tenant         string
	Project        string
	CPUMilli       int
	HostMemoryMiB  int
	RDMA           bool
	Gang           string // gang group name; empty = none
	GangSize       int
	// AllowBestEffort lets a Silver task run on a device that cannot
	// enforce Silver (no MPS or HAMi-core on its node) when no enforcing
	// device can take it: it then shares the device as Bronze does, and its
	// placement event says so. Enforcing devices are always tried first.
	AllowBestEffort bool
}

// Limits on submitted fields; validation messages quote them.
const (
	MaxTaskNameLen   = 253
	MaxDeviceCount   = 64
	MaxPriority      = 1000
	MaxRetries       = 100
	MaxLabels        = 64
	MaxTimeoutSecond = 30 * 24 * 3600
)

// Validate returns an ErrInvalid naming the first bad field. A task that
// asks for devices without a compute share gets whole devices (100%).
func (s *TaskSpec) Validate() error {
	if s.DeviceCount > 0 && s.ComputePercent == 0 {
		s.ComputePercent = 100
	}
	switch {
	case s.Name == "":
		return Invalidf("name is required")
	case len(s.Name) > MaxTaskNameLen:
		return Invalidf("name is longer than %d characters", MaxTaskNameLen)
	case len(s.Command) == 0 && s.Image == "":
		return Invalidf("command or image is required")
	case s.DeviceCount < 0 || s.DeviceCount > MaxDeviceCount:
		return Invalidf("device_count must be between 0 and %d", MaxDeviceCount)
	case s.MemoryMiB < 0:
		return Invalidf("memory_mib must not be negative")
	case s.DeviceCount > 0 && (s.ComputePercent < 10 || s.ComputePercent > 100):
		return Invalidf("compute_percent must be between 10 and 100")
	case s.DeviceCount == 0 && (s.MemoryMiB != 0 || s.ComputePercent != 0):
		return Invalidf("memory_mib and compute_percent need device_count ≥ 1")
	case s.Priority < 0 || s.Priority > MaxPriority:
		return Invalidf("priority must be between 0 and %d", MaxPriority)
	case s.TimeoutSeconds < 0 || s.TimeoutSeconds > MaxTimeoutSecond:
		return Invalidf("timeout_seconds must be between 0 and %d", MaxTimeoutSecond)
	case s.MaxRetries < 0 || s.MaxRetries > MaxRetries:
		return Invalidf("max_retries must be between 0 and %d", MaxRetries)
	case len(s.Labels) > MaxLabels:
		return Invalidf("at most %d labels", MaxLabels)
	case s.CPUMilli < 0 || s.HostMemoryMiB < 0:
		return Invalidf("cpu_milli and host_memory_mib must not be negative")
	case s.Gang != "" && s.GangSize < 1:
		return Invalidf("gang_size must be at least 1 when gang is set")
	}
	if err := s.validBounds(); err != nil {
		return err
	}
	if err := validVendor(s.Vendor); err != nil {
		return err
	}
	if s.QoS == "" {
		s.QoS = QoSBronze
	}
	if !s.QoS.Valid() {
		return Invalidf("qos must be gold, silver or bronze, not %q", s.QoS)
	}
	if s.AllowBestEffort && (s.QoS != QoSSilver || s.DeviceCount == 0) {
		return Invalidf("allow_best_effort applies to qos silver tasks with devices only")
	}
	for k := range s.Labels {
		if k == "" || len(k) > 63 {
			return Invalidf("label keys must be 1–63 characters")
		}
	}
	return nil
}

// Task is a stored task: the spec plus lifecycle bookkeeping.
type Task struct {
	ID         int64
	Spec       TaskSpec
	State      TaskState
	OwnerID    int64
	Owner      string // username, for display
	Attempt    int    // 0 for the first run; incremented on each retry
	NodeID     string
	ExitCode   *int
	Reason     string // last transition's reason
	CreatedAt  time.Time
	UpdatedAt  time.Time
	StartedAt  *time.Time
	FinishedAt *time.Time
	// SubmitKey, set at creation, makes the submission idempotent; it is
	// written with the task and not read back (see TaskBySubmitKey).
	SubmitKey *SubmitKey
}

// SubmitKey is what an idempotent submission stores with its task: the
// client's Idempotency-Key and a hash of the request it came with. A
// retry with the same key and the same request is answered with the task
// already created; the same key with another request is refused.
type SubmitKey struct {
	Key  string
	Hash string
}

// TaskEvent records one state transition.
type TaskEvent struct {
	ID     int64
	TaskID int64
	From   TaskState
	To     TaskState
	Reason string
	Actor  string
	At     time.Time
}

// TaskFilter narrows ListTasks. Zero fields are ignored.
type TaskFilter struct {
	States        []TaskState
	OwnerID       int64
	Label         map[string]string // every key=value must match
	CreatedAfter  *time.Time
	CreatedBefore *time.Time
	Query         string // substring of name
	Tenant        string
	NodeID        string // tasks placed on this node (its current attempt)
	// Scope, when set, keeps only tasks in one of Scope.Tenants or owned
	// by Scope.OwnerID: what a caller below operator may see.
	Scope *TaskScope
	Page  Page
}

// TaskScope is the visible part of the task table for one caller.
type TaskScope struct {
	Tenants []string // every task of these tenants
	OwnerID int64    // and the caller's own tasks; 0 = none
}

// Transition asks the store to move a task From → To atomically, writing an
// event. From guards against races: if the task is no longer in From the
// store returns ErrConflict. Optional fields are applied in the same transaction.
type Transition struct {
	TaskID   int64
	From     TaskState
	To       TaskState
	Reason   string
	Actor    string
	NodeID   *string
	ExitCode *int
	// Retry increments Attempt (failed/timed_out → queued).
	Retry bool
	// Via is a state the task passes through on the way, recorded in its
	// history (with ViaReason) before the move to To: the scheduler admits
	// and places a task in one write, submitted → queued → scheduled,
	// instead of updating the task twice. Empty: a direct move.
	Via       TaskState
	ViaReason string
}

// Check validates t against the transition table.
func (t Transition) Check() error {
	if t.Via != "" {
		if t.Retry || !CanTransition(t.From, t.Via) || !CanTransition(t.Via, t.To) {
			return fmt.Errorf("%w: task cannot go from %s through %s to %s", ErrConflict, t.From, t.Via, t.To)
		}
		return nil
	}
	if !CanTransition(t.From, t.To) {
		return fmt.Errorf("%w: task cannot go from %s to %s", ErrConflict, t.From, t.To)
	}
	return nil
}

// validVendor accepts "" (any vendor) or one of inventory.Vendors: a typo
// would otherwise leave a task pending forever, or a quota matching nothing.
func validVendor(v string) error {
	if v == "" || slices.Contains(inventory.Vendors, v) {
		return nil
	}
	return Invalidf("vendor must be one of %s, not %q", strings.Join(inventory.Vendors, ", "), v)
}
