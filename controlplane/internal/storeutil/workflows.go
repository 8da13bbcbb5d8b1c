package storeutil

import (
	"encoding/json"
	"fmt"

	"github.com/heteroflow/heteroflow/controlplane"
)

// PrepareWorkflow checks a workflow and its steps before insert.
func PrepareWorkflow(w *controlplane.Workflow, steps []*controlplane.WorkflowStep) error {
	switch {
	case w.Name == "":
		return controlplane.Invalidf("workflow name is required")
	case !json.Valid(w.Spec):
		return controlplane.Invalidf("workflow spec must be a JSON document")
	case len(steps) == 0:
		return controlplane.Invalidf("a workflow needs at least one step")
	}
	seen := make(map[string]bool, len(steps))
	for _, s := range steps {
		if s.Name == "" || s.Step == "" {
			return controlplane.Invalidf("every workflow step needs a name")
		}
		if seen[s.Name] {
			return fmt.Errorf("%w: step %q twice", controlplane.ErrConflict, s.Name)
		}
		seen[s.Name] = true
	}
	return nil
}

// CheckWorkflowUpdate validates the states named in u.
func CheckWorkflowUpdate(u controlplane.WorkflowUpdate) error {
	if (u.From != "" && !u.From.Valid()) || (u.To != "" && !u.To.Valid()) {
		return controlplane.Invalidf("unknown workflow state in %q → %q", u.From, u.To)
	}
	for _, c := range u.Steps {
		if !c.From.Valid() || !c.To.Valid() {
			return controlplane.Invalidf("step %s: unknown state in %q → %q", c.Name, c.From, c.To)
		}
		if c.Task != nil && c.To != controlplane.StepRunning {
			return controlplane.Invalidf("step %s: a task is created only when the step starts running", c.Name)
		}
	}
	return nil
}

// OutputsJSON encodes a step's or task's outputs ({} when none).
func OutputsJSON(m map[string]string) (string, error) { return encodeMap(m) }

// DecodeOutputs decodes OutputsJSON's form (nil for an empty object).
func DecodeOutputs(b []byte) (map[string]string, error) {
	var m map[string]string
	if err := decodeMap(b, &m); err != nil {
		return nil, err
	}
	if len(m) == 0 {
		return nil, nil
	}
	return m, nil
}
