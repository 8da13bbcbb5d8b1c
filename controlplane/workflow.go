package controlplane

import (
	"context"
	"time"
)

// WorkflowState is a workflow's lifecycle state.
type WorkflowState string

const (
	WorkflowPending   WorkflowState = "pending"
	WorkflowRunning   WorkflowState = "running"
	WorkflowSucceeded WorkflowState = "succeeded"
	WorkflowFailed    WorkflowState = "failed"
	WorkflowCancelled WorkflowState = "cancelled"
)

// AllWorkflowStates in lifecycle order.
var AllWorkflowStates = []WorkflowState{WorkflowPending, WorkflowRunning, WorkflowSucceeded, WorkflowFailed, WorkflowCancelled}

// Terminal reports whether the workflow has ended (a retry may restart it).
func (s WorkflowState) Terminal() bool {
	return s == WorkflowSucceeded || s == WorkflowFailed || s == WorkflowCancelled
}

// Valid reports whether s is a known state.
func (s WorkflowState) Valid() bool {
	for _, k := range AllWorkflowStates {
		if k == s {
			return true
		}
	}
	return false
}

// StepState is the state of one step instance of a workflow. A running step
// has a task (queued, scheduled or running — or waiting for its retry).
type StepState string

const (
	StepPending   StepState = "pending"
	StepRunning   StepState = "running"
	StepSucceeded StepState = "succeeded"
	StepFailed    StepState = "failed"
	StepCancelled StepState = "cancelled"
	// StepSkipped: the step's dependency conditions can no longer hold.
	StepSkipped StepState = "skipped"
)

// AllStepStates in lifecycle order.
var AllStepStates = []StepState{StepPending, StepRunning, StepSucceeded, StepFailed, StepCancelled, StepSkipped}

// Terminal reports whether the step has ended.
func (s StepState) Terminal() bool {
	return s == StepSucceeded || s == StepFailed || s == StepCancelled || s == StepSkipped
}

// Valid reports whether s is a known state.
func (s StepState) Valid() bool {
	for _, k := range AllStepStates {
		if k == s {
			return true
		}
	}
	return false
}

// Workflow is a stored DAG of steps. Spec is the validated spec document as
// JSON; its shape belongs to controlplane/workflow, the store keeps it as is.
type Workflow struct {
	ID       int64
	Name     string
	Spec     []byte
	State    WorkflowState
	OwnerID  int64
	Owner    string
	Tenant   string // every step's task runs in this tenant
	Project  string
	Priority int
	Reason   string
	// Generation counts retries: 0 for the first run, +1 per retry.
	Generation int
	// ResubmittedFrom is the workflow this one was resubmitted from (0 none).
	ResubmittedFrom int64
	// SubmitKey, set at creation, makes the submission idempotent (as a
	// task's); it is written with the workflow and not read back (see
	// WorkflowBySubmitKey).
	SubmitKey  *SubmitKey
	CreatedAt  time.Time
	UpdatedAt  time.Time
	StartedAt  *time.Time // set when it starts running, and again on a retry
	FinishedAt *time.Time
}

// WorkflowStep is one step instance: a spec step, or one item of a fan-out
// ("train[1]"). Its work is an ordinary task (TaskID) once released.
type WorkflowStep struct {
	WorkflowID int64
	Name       string // unique in the workflow
	Step       string // the spec step it instantiates
	Index      int    // fan-out item; -1 when the step is not fanned out
	State      StepState
	TaskID     int64     // 0 until released
	TaskState  TaskState // the task's state now (read only, "" without a task)
	Generation int       // the workflow generation that last released or reset it
	ExitCode   *int
	Outputs    map[string]string
	Reason     string
	UpdatedAt  time.Time
	StartedAt  *time.Time
	FinishedAt *time.Time
}

// WorkflowEvent records one state change of the workflow (Step "") or of
// one of its steps.
type WorkflowEvent struct {
	ID         int64
	WorkflowID int64
	Step       string
	From       string
	To         string
	Reason     string
	Actor      string
	At         time.Time
}

// WorkflowFilter narrows ListWorkflows. Zero fields are ignored.
type WorkflowFilter struct {
	States  []WorkflowState
	OwnerID int64
	Tenant  string
	// Scope, when set, keeps only what a caller below operator sees, as
	// for tasks: the workflows of Scope.Tenants and its owner's own.
	Scope *TaskScope
	Query string // substring of the name
	// Active selects the workflows the engine must look at: pending or
	// running, or ended with a step still running (its task being stopped).
	Active bool
	Page   Page
}

// StepChange is one guarded change of a step in a WorkflowUpdate: the step
// must be in From, or the whole update fails with ErrConflict.
type StepChange struct {
	Name     string
	From     StepState
	To       StepState
	Reason   string
	ExitCode *int
	Outputs  map[string]string
	// Task is created in the same transaction (To is running) and its ID
	// recorded on the step: a step's task is created exactly once.
	Task *Task
	// Reset starts the step over (a retry): task, exit code, outputs and
	// times are cleared and Generation set to the workflow's new generation.
	Reset bool
}

// WorkflowUpdate changes a workflow and any of its steps atomically, writing
// an event per change.
type WorkflowUpdate struct {
	WorkflowID int64
	// From guards the workflow's state ("" = any); To changes it ("" = kept).
	From   WorkflowState
	To     WorkflowState
	Reason string
	Actor  string
	// Retry increments Generation and restarts the clock (StartedAt = now).
	Retry bool
	Steps []StepChange
}

// WorkflowStore persists workflows (implemented by controlplane/sqlite and
// controlplane/postgres; judged by storetest.RunWorkflows). Errors follow
// Store's contract.
type WorkflowStore interface {
	// CreateWorkflow stores w in WorkflowPending with its steps (all
	// StepPending) and a first event; sets ID, State, Owner and times.
	// A w.SubmitKey its owner already holds on another workflow is
	// ErrConflict, and nothing is stored.
	CreateWorkflow(ctx context.Context, w *Workflow, steps []*WorkflowStep) error
	GetWorkflow(ctx context.Context, id int64) (*Workflow, error)
	// WorkflowBySubmitKey returns the workflow ownerID submitted with the
	// idempotency key and the request hash stored with it; ErrNotFound
	// when the owner holds no such key (never used, or cleared by
	// retention).
	WorkflowBySubmitKey(ctx context.Context, ownerID int64, key string) (*Workflow, string, error)
	// ListWorkflows returns a page, newest first, and the total.
	ListWorkflows(ctx context.Context, f WorkflowFilter) ([]*Workflow, int, error)
	// ListWorkflowSteps returns the steps in the order they were created.
	ListWorkflowSteps(ctx context.Context, workflowID int64) ([]*WorkflowStep, error)
	ListWorkflowEvents(ctx context.Context, workflowID int64) ([]*WorkflowEvent, error)
	// UpdateWorkflow applies u in one transaction and returns the workflow;
	// ErrConflict when a guard fails (nothing is written then).
	UpdateWorkflow(ctx context.Context, u WorkflowUpdate) (*Workflow, error)

	// PutTaskOutputs records the small result values a task attempt wrote
	// (replacing earlier ones of that attempt).
	PutTaskOutputs(ctx context.Context, taskID int64, attempt int, outputs map[string]string) error
	// GetTaskOutputs returns them; ErrNotFound when the attempt wrote none.
	GetTaskOutputs(ctx context.Context, taskID int64, attempt int) (map[string]string, error)
}
