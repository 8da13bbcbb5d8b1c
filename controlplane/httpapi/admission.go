package httpapi

import (
	"context"

	"github.com/heteroflow/heteroflow/controlplane"
)

// TaskAdmission is a check a subsystem adds to task submission (e.g. the
// scheduler refusing a task no node can ever hold); it returns an error
// the caller sees, or nil.
type TaskAdmission func(ctx context.Context, spec controlplane.TaskSpec) error

// AddTaskAdmission adds a check run on every POST /tasks after the
// spec's own validation, in the order added.
func (a *API) AddTaskAdmission(f TaskAdmission) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.admissions = append(a.admissions, f)
}

func (a *API) admitTask(ctx context.Context, spec controlplane.TaskSpec) error {
	a.mu.Lock()
	checks := append([]TaskAdmission(nil), a.admissions...)
	a.mu.Unlock()
	for _, f := range checks {
		if err := f(ctx, spec); err != nil {
			return err
		}
	}
	return nil
}
