package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/heteroflow/heteroflow/controlplane"
)

// Submission is a workflow to create.
type Submission struct {
	Document []byte            // YAML or JSON
	Params   map[string]string // overrides of string parameters
	OwnerID  int64
	Owner    string
	Tenant   string
	// ResubmittedFrom links a resubmission to its original (0 none).
	ResubmittedFrom int64
	// SubmitKey makes the submission idempotent (nil: none); a key its
	// owner already holds is controlplane.ErrConflict.
	SubmitKey *controlplane.SubmitKey
}

// Submit validates the document and stores the workflow with every step
// instance pending; the engine starts it. Invalid documents are
// controlplane.ErrInvalid naming the step at fault.
func Submit(ctx context.Context, st controlplane.WorkflowStore, sub Submission) (*controlplane.Workflow, *Compiled, error) {
	spec, err := Parse(sub.Document)
	if err != nil {
		return nil, nil, err
	}
	c, err := Compile(spec, sub.Params)
	if err != nil {
		return nil, nil, err
	}
	doc, err := json.Marshal(c.Spec) // parameters resolved: the engine needs nothing else
	if err != nil {
		return nil, nil, err
	}
	w := &controlplane.Workflow{Name: spec.Name, Spec: doc, OwnerID: sub.OwnerID, Owner: sub.Owner, Tenant: sub.Tenant,
		Project: spec.Project, Priority: spec.Priority, ResubmittedFrom: sub.ResubmittedFrom, Reason: "submitted",
		SubmitKey: sub.SubmitKey}
	if sub.ResubmittedFrom != 0 {
		w.Reason = fmt.Sprintf("resubmitted from workflow %d", sub.ResubmittedFrom)
	}
	steps := make([]*controlplane.WorkflowStep, len(c.Instances))
	for i, in := range c.Instances {
		steps[i] = &controlplane.WorkflowStep{Name: in.Name, Step: c.Spec.Steps[in.Step].Name, Index: in.Index}
	}
	if err := st.CreateWorkflow(ctx, w, steps); err != nil {
		return nil, nil, err
	}
	return w, c, nil
}

// Cancel ends a pending or running workflow: pending steps are cancelled
// at once, running steps' tasks by the engine (their steps end when the
// tasks do).
func Cancel(ctx context.Context, st controlplane.WorkflowStore, id int64, actor, reason string) (*controlplane.Workflow, error) {
	for attempt := 0; attempt < 5; attempt++ {
		w, err := st.GetWorkflow(ctx, id)
		if err != nil {
			return nil, err
		}
		if w.State.Terminal() {
			return nil, fmt.Errorf("%w: workflow %d is %s and cannot be cancelled", controlplane.ErrConflict, id, w.State)
		}
		rows, err := st.ListWorkflowSteps(ctx, id)
		if err != nil {
			return nil, err
		}
		u := controlplane.WorkflowUpdate{WorkflowID: id, From: w.State, To: controlplane.WorkflowCancelled, Reason: reason, Actor: actor}
		for _, r := range rows {
			if r.State == controlplane.StepPending {
				u.Steps = append(u.Steps, controlplane.StepChange{Name: r.Name, From: r.State, To: controlplane.StepCancelled,
					Reason: "the workflow was cancelled"})
			}
		}
		w, err = st.UpdateWorkflow(ctx, u)
		if err == nil || !isConflict(err) {
			return w, err
		}
	}
	return nil, fmt.Errorf("%w: workflow %d keeps changing; try again", controlplane.ErrConflict, id)
}

// Retry restarts a failed or cancelled workflow: every step that did not
// succeed starts over, and with from also that step and every step after
// it. Fan-out steps scheduled as a gang start over whole.
func Retry(ctx context.Context, st controlplane.WorkflowStore, id int64, from, actor string) (*controlplane.Workflow, error) {
	w, err := st.GetWorkflow(ctx, id)
	if err != nil {
		return nil, err
	}
	if w.State != controlplane.WorkflowFailed && w.State != controlplane.WorkflowCancelled {
		return nil, fmt.Errorf("%w: workflow %d is %s; only a failed or cancelled workflow can be retried", controlplane.ErrConflict, id, w.State)
	}
	c, err := Load(w)
	if err != nil {
		return nil, err
	}
	rows, err := st.ListWorkflowSteps(ctx, id)
	if err != nil {
		return nil, err
	}
	byName := map[string]*controlplane.WorkflowStep{}
	for _, r := range rows {
		byName[r.Name] = r
		if r.State == controlplane.StepRunning {
			return nil, fmt.Errorf("%w: step %s is still stopping; retry when it ended", controlplane.ErrConflict, r.Name)
		}
	}
	// own: a step with an instance that did not succeed; reset: whole steps
	// to start over — the from step and everything after a step that runs
	// again (their inputs change), and gangs with a member to rerun.
	own := make([]bool, len(c.Spec.Steps))
	for _, in := range c.Instances {
		if r := byName[in.Name]; r != nil && r.State != controlplane.StepSucceeded {
			own[in.Step] = true
		}
	}
	reset := make([]bool, len(c.Spec.Steps))
	if from != "" {
		i, ok := c.index[from]
		if !ok {
			return nil, controlplane.Invalidf("retry from unknown step %q", from)
		}
		reset[i] = true
	}
	for _, j := range c.order { // dependencies come first
		for _, d := range c.deps[j] {
			if own[d] || reset[d] {
				reset[j] = true
			}
		}
		if own[j] && c.Spec.Steps[j].Gang {
			reset[j] = true
		}
	}
	u := controlplane.WorkflowUpdate{WorkflowID: id, From: w.State, To: controlplane.WorkflowRunning, Retry: true, Actor: actor,
		Reason: fmt.Sprintf("retry %d", w.Generation+1)}
	if from != "" {
		u.Reason += " from step " + from
	}
	for _, in := range c.Instances {
		r := byName[in.Name]
		if r == nil || (r.State == controlplane.StepSucceeded && !reset[in.Step]) || r.State == controlplane.StepPending {
			continue
		}
		u.Steps = append(u.Steps, controlplane.StepChange{Name: r.Name, From: r.State, To: controlplane.StepPending,
			Reset: true, Reason: u.Reason})
	}
	if len(u.Steps) == 0 {
		return nil, fmt.Errorf("%w: no step of workflow %d needs to run again", controlplane.ErrConflict, id)
	}
	return st.UpdateWorkflow(ctx, u)
}

func isConflict(err error) bool { return errors.Is(err, controlplane.ErrConflict) }
