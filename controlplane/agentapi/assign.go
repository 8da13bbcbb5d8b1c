package agentapi

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/heteroflow/heteroflow/agent/protocol"
	"github.com/heteroflow/heteroflow/controlplane"
)

// Assign places a queued task on a node with the given devices: it stores
// the run assignment and moves the task queued → scheduled in one
// transaction, then wakes the node's long-poll. The scheduler calls this;
// until it exists, tests and operators do.
func (s *Service) Assign(ctx context.Context, taskID int64, nodeID string, devices []protocol.DeviceSlice) (*controlplane.Task, error) {
	t, err := s.store.GetTask(ctx, taskID)
	if err != nil {
		return nil, err
	}
	n, err := s.store.GetNode(ctx, nodeID)
	if err != nil {
		return nil, err
	}
	if n.Cordoned || n.Draining {
		return nil, fmt.Errorf("%w: node %s is cordoned", controlplane.ErrConflict, nodeID)
	}
	spec := protocol.TaskSpec{TaskID: t.ID, Attempt: t.Attempt, Name: t.Spec.Name, Command: t.Spec.Command,
		Image: t.Spec.Image, Args: t.Spec.Args, Env: t.Spec.Env, SecretEnv: t.Spec.SecretEnv, QoS: string(t.Spec.QoS),
		TimeoutSeconds: t.Spec.TimeoutSeconds, Devices: devices}
	spec.Tenant, spec.Owner = t.Spec.Tenant, t.Owner // they choose the local account the task runs as
	payload, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	a := &controlplane.Assignment{NodeID: nodeID, Kind: controlplane.AssignRun, TaskID: t.ID, Attempt: t.Attempt, Payload: payload}
	out, err := s.store.AssignTask(ctx, a, controlplane.Transition{TaskID: t.ID, From: controlplane.TaskQueued,
		To: controlplane.TaskScheduled, Reason: "assigned to " + nodeID, Actor: "scheduler", NodeID: &nodeID})
	if err != nil {
		return nil, err
	}
	s.notify.Notify(nodeID)
	return out, nil
}

// CancelOnNode queues a cancel item for the task's current run on its node
// and wakes the agent; the task API can call it right after a cancel so
// the agent does not wait for the once-a-second sweep.
func (s *Service) CancelOnNode(ctx context.Context, taskID int64) error {
	t, err := s.store.GetTask(ctx, taskID)
	if err != nil {
		return err
	}
	if t.NodeID == "" {
		return nil
	}
	a := &controlplane.Assignment{NodeID: t.NodeID, Kind: controlplane.AssignCancel, TaskID: t.ID, Attempt: t.Attempt,
		Payload: json.RawMessage(`{}`)}
	if err := s.store.CreateAssignment(ctx, a); err != nil {
		return err
	}
	s.notify.Notify(t.NodeID)
	return nil
}

// stopWindow bounds how far back the sweep looks for runs to stop.
const stopWindow = 7 * 24 * time.Hour

// sweepStops queues cancel items for runs the ledger stopped elsewhere.
func (s *Service) sweepStops(ctx context.Context) {
	runs, err := s.store.RunsToStop(ctx, s.opts.Now().Add(-stopWindow))
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("sweep runs to stop", "err", err)
		}
		return
	}
	for _, run := range runs {
		a := &controlplane.Assignment{NodeID: run.NodeID, Kind: controlplane.AssignCancel, TaskID: run.TaskID,
			Attempt: run.Attempt, Payload: json.RawMessage(`{}`)}
		if err := s.store.CreateAssignment(ctx, a); err != nil {
			s.log.Warn("queue cancel", "task", run.TaskID, "node", run.NodeID, "err", err)
			continue
		}
		s.log.Info("queued cancel for agent", "task", run.TaskID, "attempt", run.Attempt, "node", run.NodeID)
		s.notify.Notify(run.NodeID)
	}
}
