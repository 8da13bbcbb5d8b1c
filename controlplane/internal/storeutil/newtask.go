package storeutil

import (
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
)

// NewTask is a task checked and encoded for insert: the unit both stores
// hand to their GroupCommit.
type NewTask struct {
	Task *controlplane.Task
	JSON SpecJSON
}

// PrepareTask validates (and defaults) t.Spec and encodes its JSON columns,
// all before any SQL runs.
func PrepareTask(t *controlplane.Task) (NewTask, error) {
	if err := t.Spec.Validate(); err != nil {
		return NewTask{}, err
	}
	js, err := EncodeSpec(&t.Spec)
	if err != nil {
		return NewTask{}, err
	}
	return NewTask{Task: t, JSON: js}, nil
}

// Submitted records on the caller's task what the insert produced. Stores
// call it only after the commit, so a rolled-back batch leaves the task
// untouched.
func (n NewTask) Submitted(id int64, owner string, now time.Time) {
	t := n.Task
	t.ID, t.Owner, t.State, t.Attempt = id, owner, controlplane.TaskSubmitted, 0
	t.NodeID, t.ExitCode, t.StartedAt, t.FinishedAt = "", nil, nil, nil
	t.CreatedAt, t.UpdatedAt = now, now
}
