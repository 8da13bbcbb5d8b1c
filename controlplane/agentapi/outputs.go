package agentapi

import (
	"context"
	"errors"

	"github.com/heteroflow/heteroflow/agent/protocol"
	"github.com/heteroflow/heteroflow/controlplane"
)

// outputStore is the store's task-outputs half (controlplane.WorkflowStore).
type outputStore interface {
	PutTaskOutputs(ctx context.Context, taskID int64, attempt int, outputs map[string]string) error
}

// putOutputs records the result values a node reported with a task's end.
// Values over protocol's limits, or for a task not placed on this node,
// are dropped with a warning (the sequence must still advance); a store
// error is returned so the agent resends.
func (s *Service) putOutputs(ctx context.Context, node string, u protocol.StatusUpdate) error {
	if len(u.Outputs) == 0 || u.TaskID == 0 {
		return nil
	}
	st, ok := s.store.(outputStore)
	if !ok {
		return nil
	}
	if len(u.Outputs) > protocol.MaxOutputs {
		s.log.Warn("task outputs dropped: too many", "node", node, "task", u.TaskID, "count", len(u.Outputs))
		return nil
	}
	for k, v := range u.Outputs {
		if k == "" || len(k) > 128 || len(v) > protocol.MaxOutputValue {
			s.log.Warn("task outputs dropped: a key or value is too long", "node", node, "task", u.TaskID)
			return nil
		}
	}
	t, err := s.store.GetTask(ctx, u.TaskID)
	if errors.Is(err, controlplane.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if t.NodeID != node || t.Attempt != u.Attempt {
		s.log.Warn("task outputs dropped: not this node's current run", "node", node, "task", u.TaskID)
		return nil
	}
	return st.PutTaskOutputs(ctx, u.TaskID, u.Attempt, u.Outputs)
}
