package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
)

// Actor names the engine in events and audit entries.
const Actor = "workflow-engine"

// Load decodes and compiles a stored workflow's spec.
func Load(w *controlplane.Workflow) (*Compiled, error) {
	var s Spec
	if err := json.Unmarshal(w.Spec, &s); err != nil {
		return nil, fmt.Errorf("workflow %d spec: %w", w.ID, err)
	}
	return Compile(&s, nil)
}

// advance computes and applies one step of workflow w (see doc.go).
func (e *Engine) advance(ctx context.Context, w *controlplane.Workflow, c *Compiled) error {
	rows, err := e.store.ListWorkflowSteps(ctx, w.ID)
	if err != nil {
		return err
	}
	p := &pass{e: e, w: w, c: c, now: e.now(), rows: map[string]*controlplane.WorkflowStep{}}
	for _, r := range rows {
		p.rows[r.Name] = r
	}
	if err := p.observe(ctx); err != nil {
		return err
	}
	timedOut := !w.State.Terminal() && c.Spec.TimeoutSeconds > 0 && w.StartedAt != nil &&
		p.now.Sub(*w.StartedAt) > time.Duration(c.Spec.TimeoutSeconds)*time.Second
	p.ended = w.State.Terminal() || timedOut
	p.stopping = p.ended || (c.Spec.FailurePolicy == PolicyStop && len(p.failed) > 0)
	if err := p.stopRunning(ctx); err != nil {
		return err
	}
	to, reason := w.State, ""
	if !w.State.Terminal() {
		if w.State == controlplane.WorkflowPending {
			to, reason = controlplane.WorkflowRunning, "started"
		}
		if timedOut {
			to, reason = controlplane.WorkflowFailed, fmt.Sprintf("timed out after %ds", c.Spec.TimeoutSeconds)
		}
		p.release(timedOut)
		if !timedOut {
			if end, why := p.outcome(); end != "" {
				to, reason = end, why
			}
		}
	}
	if len(p.changes) == 0 && to == w.State {
		return nil
	}
	u := controlplane.WorkflowUpdate{WorkflowID: w.ID, From: w.State, Reason: reason, Actor: Actor, Steps: p.changes}
	if to != w.State {
		u.To = to
	}
	_, err = e.store.UpdateWorkflow(ctx, u)
	if errors.Is(err, controlplane.ErrConflict) {
		return nil // the workflow moved meanwhile (a cancel): the next tick sees it
	}
	if err != nil {
		return err
	}
	if u.To.Terminal() {
		e.auditEnd(w, u.To, reason)
	}
	e.m.released.Add(float64(p.released))
	return nil
}

// pass is one advance of one workflow.
type pass struct {
	e        *Engine
	w        *controlplane.Workflow
	c        *Compiled
	now      time.Time
	rows     map[string]*controlplane.WorkflowStep
	changes  []controlplane.StepChange
	failed   []string // instances that failed
	stopping bool     // cancel running steps, start only handlers
	ended    bool     // the workflow ended (or times out now): stop everything
	released int
}

func (p *pass) set(r *controlplane.WorkflowStep, ch controlplane.StepChange) {
	ch.Name, ch.From = r.Name, r.State
	p.changes = append(p.changes, ch)
	r.State = ch.To
	if ch.ExitCode != nil {
		r.ExitCode = ch.ExitCode
	}
	if ch.Outputs != nil {
		r.Outputs = ch.Outputs
	}
	if ch.To == controlplane.StepFailed {
		p.failed = append(p.failed, r.Name)
	}
}

// observe records the end of running steps whose tasks ended. A failed
// task with retries left is still the step's: the scheduler retries it.
func (p *pass) observe(ctx context.Context) error {
	for _, in := range p.c.Instances {
		r := p.rows[in.Name]
		if r == nil {
			return fmt.Errorf("workflow %d: step %s is missing from the store", p.w.ID, in.Name)
		}
		if r.State == controlplane.StepFailed {
			p.failed = append(p.failed, r.Name)
		}
		if r.State != controlplane.StepRunning || !r.TaskState.Terminal() {
			continue
		}
		t, err := p.e.store.GetTask(ctx, r.TaskID)
		if err != nil {
			return err
		}
		switch t.State {
		case controlplane.TaskSucceeded:
			outs, err := p.e.store.GetTaskOutputs(ctx, t.ID, t.Attempt)
			if err != nil && !errors.Is(err, controlplane.ErrNotFound) {
				return err
			}
			p.set(r, controlplane.StepChange{To: controlplane.StepSucceeded, ExitCode: t.ExitCode, Outputs: outs,
				Reason: fmt.Sprintf("task %d succeeded", t.ID)})
		case controlplane.TaskCancelled:
			p.set(r, controlplane.StepChange{To: controlplane.StepCancelled, ExitCode: t.ExitCode,
				Reason: fmt.Sprintf("task %d cancelled: %s", t.ID, t.Reason)})
		default: // failed, timed out
			retry, err := p.e.retriesLeft(ctx, t)
			if err != nil {
				return err
			}
			if retry { // stopRunning decides if the workflow stops
				continue
			}
			p.set(r, controlplane.StepChange{To: controlplane.StepFailed, ExitCode: t.ExitCode,
				Reason: fmt.Sprintf("task %d %s: %s", t.ID, t.State, t.Reason)})
		}
	}
	return nil
}

// retriesLeft mirrors the scheduler's ListRetryable: attempts left and the
// end not marked final.
func (e *Engine) retriesLeft(ctx context.Context, t *controlplane.Task) (bool, error) {
	if t.Attempt >= t.Spec.MaxRetries {
		return false, nil
	}
	ts, err := e.store.GetTaskSchedule(ctx, t.ID)
	if errors.Is(err, controlplane.ErrNotFound) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	return !ts.Final, nil
}

// stopRunning cancels the tasks of running steps once the workflow ended
// or stops after a failure; each step then ends when its task does. A task
// waiting for a retry is marked final so the scheduler leaves it, and its
// step fails now.
func (p *pass) stopRunning(ctx context.Context) error {
	if !p.stopping {
		return nil
	}
	why := "the workflow " + string(p.w.State)
	switch {
	case !p.w.State.Terminal() && p.ended:
		why = "the workflow timed out"
	case !p.ended:
		why = "the workflow stops after step " + strings.Join(p.failed, ", ") + " failed"
	}
	for _, in := range p.c.Instances {
		r := p.rows[in.Name]
		if r.State != controlplane.StepRunning || (!p.ended && p.c.handler[in.Step]) {
			continue // handlers of the failure run on
		}
		if r.TaskState.Terminal() { // failed with a retry pending
			if err := p.e.finalise(ctx, r.TaskID, why); err != nil {
				return err
			}
			p.set(r, controlplane.StepChange{To: controlplane.StepFailed, Reason: "not retried: " + why})
			continue
		}
		if err := p.e.cancelTask(ctx, r.TaskID, why); err != nil {
			return err
		}
	}
	return nil
}

// release decides every pending step whose dependencies have ended.
func (p *pass) release(timedOut bool) {
	for k, in := range p.c.Instances {
		r := p.rows[in.Name]
		if r.State != controlplane.StepPending {
			continue
		}
		if timedOut {
			p.set(r, controlplane.StepChange{To: controlplane.StepCancelled, Reason: "the workflow timed out"})
			continue
		}
		ready, skip, why := p.ready(in.Step)
		switch {
		case skip:
			p.set(r, controlplane.StepChange{To: controlplane.StepSkipped, Reason: why})
		case !ready:
		case p.stopping && !p.c.handler[in.Step]:
			p.set(r, controlplane.StepChange{To: controlplane.StepCancelled,
				Reason: "not started: the workflow stops after step " + strings.Join(p.failed, ", ") + " failed"})
		default:
			spec := p.c.TaskSpec(k, p.w, p.values)
			if err := spec.Validate(); err != nil {
				p.set(r, controlplane.StepChange{To: controlplane.StepFailed, Reason: "task spec: " + err.Error()})
				continue
			}
			task := &controlplane.Task{Spec: spec, OwnerID: p.w.OwnerID, Owner: p.w.Owner,
				Reason: fmt.Sprintf("workflow %d step %s", p.w.ID, in.Name)}
			p.set(r, controlplane.StepChange{To: controlplane.StepRunning, Task: task, Reason: why})
			p.released++
		}
	}
}

// depState sums up one dependency: whether all its instances ended, and
// whether its condition holds.
func (p *pass) depState(step int, on string) (ended, holds bool) {
	succeeded, failed := true, false
	for _, k := range p.c.of[step] {
		r := p.rows[p.c.Instances[k].Name]
		if !r.State.Terminal() {
			return false, false
		}
		succeeded = succeeded && r.State == controlplane.StepSucceeded
		failed = failed || r.State == controlplane.StepFailed
	}
	switch on {
	case OnSuccess:
		return true, succeeded
	case OnFailure:
		return true, failed
	}
	return true, true
}

// ready evaluates a step's dependencies under its when (all/any).
func (p *pass) ready(step int) (ready, skip bool, why string) {
	st := &p.c.Spec.Steps[step]
	if len(st.Depends) == 0 {
		return true, false, "released: no dependencies"
	}
	any := st.When == "any"
	allEnded, held := true, []string{}
	var unmet []string
	for i, d := range st.Depends {
		ended, holds := p.depState(p.c.deps[step][i], d.On)
		if !ended {
			allEnded = false
			continue
		}
		if holds {
			held = append(held, d.Step+" "+d.On)
			if any {
				return true, false, "released: " + d.Step + " " + d.On
			}
		} else {
			unmet = append(unmet, d.Step+" did not end in "+d.On)
			if !any {
				return false, true, "skipped: " + strings.Join(unmet, ", ")
			}
		}
	}
	switch {
	case !allEnded:
		return false, false, ""
	case any:
		return false, true, "skipped: no dependency condition held (" + strings.Join(unmet, ", ") + ")"
	}
	return true, false, "released: " + strings.Join(held, ", ")
}

// values returns what a step's instances offer later steps, in item order.
func (p *pass) values(name string) []StepValues {
	i, ok := p.c.index[name]
	if !ok {
		return nil
	}
	out := make([]StepValues, 0, len(p.c.of[i]))
	for _, k := range p.c.of[i] {
		r := p.rows[p.c.Instances[k].Name]
		v := StepValues{Outputs: r.Outputs, Artifacts: p.c.Artifacts(k, p.w)}
		if r.ExitCode != nil {
			v.ExitCode = strconv.Itoa(*r.ExitCode)
		}
		if r.TaskID != 0 {
			v.TaskID = strconv.FormatInt(r.TaskID, 10)
		}
		out = append(out, v)
	}
	return out
}

// outcome: the workflow's end once every step ended ("" before).
func (p *pass) outcome() (controlplane.WorkflowState, string) {
	var failed, cancelled []string
	for _, in := range p.c.Instances {
		r := p.rows[in.Name]
		switch r.State {
		case controlplane.StepPending, controlplane.StepRunning:
			return "", ""
		case controlplane.StepFailed:
			failed = append(failed, r.Name)
		case controlplane.StepCancelled:
			cancelled = append(cancelled, r.Name)
		}
	}
	sort.Strings(failed)
	switch {
	case len(failed) > 0:
		return controlplane.WorkflowFailed, "failed steps: " + strings.Join(failed, ", ")
	case len(cancelled) > 0:
		return controlplane.WorkflowFailed, "cancelled steps: " + strings.Join(cancelled, ", ")
	}
	return controlplane.WorkflowSucceeded, "every step ended as its conditions required"
}

// cancelTask stops a step's task; a lost race with the scheduler or the
// agent is left to the next tick.
func (e *Engine) cancelTask(ctx context.Context, id int64, why string) error {
	t, err := e.store.GetTask(ctx, id)
	if err != nil {
		return err
	}
	if !controlplane.CanTransition(t.State, controlplane.TaskCancelled) {
		return nil
	}
	_, err = e.store.TransitionTask(ctx, controlplane.Transition{TaskID: id, From: t.State, To: controlplane.TaskCancelled,
		Reason: "cancelled: " + why, Actor: Actor})
	if errors.Is(err, controlplane.ErrConflict) {
		return nil
	}
	return err
}

// finalise marks a failed task's end final so the scheduler does not retry it.
func (e *Engine) finalise(ctx context.Context, id int64, why string) error {
	ts, err := e.store.GetTaskSchedule(ctx, id)
	if errors.Is(err, controlplane.ErrNotFound) {
		ts, err = &controlplane.TaskSchedule{TaskID: id}, nil
	}
	if err != nil {
		return err
	}
	ts.Final = true
	return e.store.PutTaskSchedule(ctx, ts)
}
