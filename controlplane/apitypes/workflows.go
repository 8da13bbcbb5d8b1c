package apitypes

import (
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
)

// WorkflowSubmitJSON is a workflow document to validate or submit.
type WorkflowSubmitJSON struct {
	Document string            `json:"document" minLength:"1" maxLength:"524288" doc:"The workflow spec, YAML or JSON"`
	Params   map[string]string `json:"params,omitempty" doc:"Overrides of the spec's string parameters"`
}

// WorkflowJSON is a stored workflow.
type WorkflowJSON struct {
	ID              int64                      `json:"id"`
	Name            string                     `json:"name"`
	State           controlplane.WorkflowState `json:"state" enum:"pending,running,succeeded,failed,cancelled"`
	OwnerID         int64                      `json:"owner_id"`
	Owner           string                     `json:"owner"`
	Tenant          string                     `json:"tenant"`
	Project         string                     `json:"project"`
	Priority        int                        `json:"priority"`
	Reason          string                     `json:"reason"`
	Generation      int                        `json:"generation" doc:"Retries so far"`
	ResubmittedFrom int64                      `json:"resubmitted_from,omitempty"`
	CreatedAt       time.Time                  `json:"created_at"`
	UpdatedAt       time.Time                  `json:"updated_at"`
	StartedAt       *time.Time                 `json:"started_at"`
	FinishedAt      *time.Time                 `json:"finished_at"`
}

// WorkflowStepJSON is one step instance.
type WorkflowStepJSON struct {
	Name       string                 `json:"name" doc:"Instance name, e.g. train[1]"`
	Step       string                 `json:"step" doc:"The spec step"`
	Index      int                    `json:"index" doc:"Fan-out item, -1 when not fanned out"`
	State      controlplane.StepState `json:"state" enum:"pending,running,succeeded,failed,cancelled,skipped"`
	TaskID     int64                  `json:"task_id,omitempty"`
	TaskState  controlplane.TaskState `json:"task_state,omitempty"`
	Generation int                    `json:"generation"`
	ExitCode   *int                   `json:"exit_code"`
	Outputs    map[string]string      `json:"outputs,omitempty"`
	Artifacts  map[string]string      `json:"artifacts,omitempty"`
	Reason     string                 `json:"reason"`
	UpdatedAt  time.Time              `json:"updated_at"`
	StartedAt  *time.Time             `json:"started_at"`
	FinishedAt *time.Time             `json:"finished_at"`
}

// WorkflowEdgeJSON is one dependency between step instances.
type WorkflowEdgeJSON struct {
	From string `json:"from"`
	To   string `json:"to"`
	On   string `json:"on" enum:"success,failure,always"`
}

// WorkflowDetailJSON is a workflow with its spec, steps and graph.
type WorkflowDetailJSON struct {
	WorkflowJSON
	Spec  map[string]any     `json:"spec" doc:"The validated spec, parameters resolved (null for viewers: it holds the steps' env)"`
	Steps []WorkflowStepJSON `json:"steps"`
	Edges []WorkflowEdgeJSON `json:"edges"`
}

// WorkflowPlanJSON is a validated document: its step instances and graph.
type WorkflowPlanJSON struct {
	Name  string             `json:"name"`
	Steps []WorkflowStepJSON `json:"steps"`
	Edges []WorkflowEdgeJSON `json:"edges"`
}

// WorkflowEventsJSON lists a workflow's state changes.
type WorkflowEventsJSON struct {
	Items []WorkflowEventJSON `json:"items"`
}

// WorkflowEventJSON is one state change of the workflow (step "") or a step.
type WorkflowEventJSON struct {
	ID     int64     `json:"id"`
	Step   string    `json:"step"`
	From   string    `json:"from"`
	To     string    `json:"to"`
	Reason string    `json:"reason"`
	Actor  string    `json:"actor"`
	At     time.Time `json:"at"`
}
