package agentapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/heteroflow/heteroflow/agent/protocol"
	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/httpapi"
	"github.com/heteroflow/heteroflow/controlplane/tracing"
)

func (s *Service) heartbeat(w http.ResponseWriter, r *http.Request, node string) {
	var hb protocol.Heartbeat
	if err := decode(r, &hb); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	running, err := json.Marshal(hb.Running)
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	prev, err := s.store.GetNode(r.Context(), node)
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	n, err := s.store.RecordHeartbeat(r.Context(), node, controlplane.NodeHeartbeat{At: s.opts.Now(),
		Health: hb.Health, CPUCount: hb.CPUCount, MemoryTotalMiB: hb.MemoryTotalMiB, MemoryFreeMiB: hb.MemoryFreeMiB,
		Inventory: hb.Inventory, Running: running})
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	s.m.heartbeats.Inc()
	if prev.State != controlplane.NodeOnline {
		s.log.Info("node online", "node", node)
	}
	s.m.up.WithLabelValues(node, n.Hostname).Set(1)
	// Expected: of the tasks the agent runs, those the ledger still wants
	// on this node. The agent stops the others (never runs a task twice).
	resp := protocol.HeartbeatResponse{NodeID: node, State: string(n.State), Expected: []protocol.RunningTask{}}
	for _, rt := range hb.Running {
		traceFirstReport(r.Context(), node, rt)
		t, err := s.store.GetTask(r.Context(), rt.TaskID)
		if err != nil && !errors.Is(err, controlplane.ErrNotFound) {
			httpapi.WriteError(w, r, s.log, err)
			return
		}
		if err == nil && t.NodeID == node && t.Attempt == rt.Attempt &&
			(t.State == controlplane.TaskScheduled || t.State == controlplane.TaskRunning) {
			resp.Expected = append(resp.Expected, rt)
		}
	}
	writeJSON(w, http.StatusOK, resp)
}

// traceFirstReport ends a task's trace (request → cycle → bind → agent
// start) with a span for the first heartbeat that reports it running.
func traceFirstReport(ctx context.Context, node string, rt protocol.RunningTask) {
	ctx, first := tracing.Tasks.Take(ctx, rt.TaskID)
	if !first {
		return
	}
	_, span := tracing.Tracer().Start(protocol.WithTraceParent(ctx, rt.TraceParent), "agentapi.heartbeat",
		trace.WithAttributes(attribute.Int64("task.id", rt.TaskID), attribute.String("node", node)))
	span.End()
}

// parseWait reads ?wait= as a Go duration ("30s") or seconds ("30").
func parseWait(v string, maxWait time.Duration) (time.Duration, error) {
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		n, aerr := strconv.Atoi(v)
		if aerr != nil {
			return 0, controlplane.Invalidf("wait must be a duration such as 30s")
		}
		d = time.Duration(n) * time.Second
	}
	if d < 0 {
		return 0, controlplane.Invalidf("wait must not be negative")
	}
	return min(d, maxWait), nil
}

// assignments is the long-poll: it answers as soon as the node has open
// items, or empty after wait.
func (s *Service) assignments(w http.ResponseWriter, r *http.Request, node string) {
	wait, err := parseWait(r.URL.Query().Get("wait"), s.opts.MaxWait)
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	ch, gone := s.notify.C(node), s.notify.Gone(node)
	var recheck <-chan time.Time
	if s.opts.Recheck > 0 {
		t := time.NewTicker(s.opts.Recheck)
		defer t.Stop()
		recheck = t.C
	}
	for {
		// Drop a stale poke: the read below sees everything stored so far.
		select {
		case <-ch:
		default:
		}
		items, err := s.deliverable(r, node)
		if err != nil {
			httpapi.WriteError(w, r, s.log, err)
			return
		}
		if len(items) > 0 || wait == 0 {
			writeJSON(w, http.StatusOK, protocol.AssignmentList{Items: items})
			return
		}
		select {
		case <-ch:
		case <-gone:
		case <-recheck:
		case <-deadline.C:
			wait = 0 // one last read, then answer
		case <-r.Context().Done():
			return
		}
		// A node revoked while it waits is answered now, not at its next poll.
		if err := s.checkAgent(r.Context(), httpapi.PrincipalFrom(r.Context())); err != nil {
			httpapi.WriteError(w, r, s.log, err)
			return
		}
	}
}

// deliverable turns the node's open assignments into wire items; run items
// whose task the ledger no longer wants on this node are closed instead.
func (s *Service) deliverable(r *http.Request, node string) ([]protocol.Assignment, error) {
	open, err := s.store.OpenAssignments(r.Context(), node)
	if err != nil {
		return nil, err
	}
	items := []protocol.Assignment{}
	now := s.opts.Now()
	for _, a := range open {
		item := protocol.Assignment{ID: a.ID, Kind: a.Kind, TaskID: a.TaskID, Attempt: a.Attempt}
		switch a.Kind {
		case controlplane.AssignRun:
			t, err := s.store.GetTask(r.Context(), a.TaskID)
			if err != nil && !errors.Is(err, controlplane.ErrNotFound) {
				return nil, err
			}
			if err != nil || t.State != controlplane.TaskScheduled || t.Attempt != a.Attempt || t.NodeID != node {
				if cerr := s.store.CloseAssignment(r.Context(), a.ID, json.RawMessage(`"skipped"`)); cerr != nil {
					return nil, cerr
				}
				continue
			}
			var spec protocol.TaskSpec
			if err := json.Unmarshal(a.Payload, &spec); err != nil {
				return nil, fmt.Errorf("assignment %d payload: %w", a.ID, err)
			}
			item.Task = &spec
		case controlplane.AssignManage:
			var m protocol.Management
			if err := json.Unmarshal(a.Payload, &m); err != nil {
				return nil, fmt.Errorf("assignment %d payload: %w", a.ID, err)
			}
			m.ID = a.ID
			item.Manage = &m
		}
		s.m.assignLat.Observe(now.Sub(a.CreatedAt).Seconds())
		items = append(items, item)
	}
	return items, nil
}

// phaseState maps an outbox phase to the task state it reports.
var phaseState = map[string]controlplane.TaskState{
	protocol.PhaseStarted:   controlplane.TaskRunning,
	protocol.PhaseSucceeded: controlplane.TaskSucceeded,
	protocol.PhaseFailed:    controlplane.TaskFailed,
	protocol.PhaseCancelled: controlplane.TaskCancelled,
	protocol.PhaseTimedOut:  controlplane.TaskTimedOut,
	protocol.PhaseManaged:   "",
}

// status applies outbox entries in order. The answer's acked is the last
// sequence handled (applied or duplicate); on a store error it stops there
// so the agent resends the rest.
func (s *Service) status(w http.ResponseWriter, r *http.Request, node string) {
	var b protocol.StatusBatch
	if err := decode(r, &b); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	var acked uint64
	for _, u := range b.Updates {
		to, ok := phaseState[u.Phase]
		if !ok {
			// Still consume the sequence: a bad entry must not block the queue.
			s.log.Warn("agent sent an unknown phase", "node", node, "seq", u.Seq, "phase", u.Phase)
			to = ""
		}
		// Outputs first: whoever sees the task ended finds its outputs.
		if err := s.putOutputs(r.Context(), node, u); err != nil {
			if acked == 0 {
				httpapi.WriteError(w, r, s.log, err)
				return
			}
			break
		}
		st := controlplane.NodeStatus{NodeID: node, Seq: u.Seq, TaskID: u.TaskID, To: to, Reason: u.Reason,
			ExitCode: u.ExitCode, AssignmentID: u.AssignmentID}
		if u.Result != nil {
			raw, err := json.Marshal(u.Result)
			if err != nil {
				httpapi.WriteError(w, r, s.log, err)
				return
			}
			st.Result = raw
		}
		applied, err := s.store.ApplyNodeStatus(r.Context(), st)
		if err != nil {
			if acked == 0 {
				httpapi.WriteError(w, r, s.log, err)
				return
			}
			break
		}
		outcome := "duplicate"
		if applied {
			outcome = "applied"
			if to != "" {
				s.m.transitions.WithLabelValues(string(to)).Inc()
			}
		}
		s.m.statuses.WithLabelValues(outcome).Inc()
		acked = u.Seq
	}
	writeJSON(w, http.StatusOK, protocol.StatusAck{Acked: acked})
}

// maxChunk bounds one log chunk (the request body cap bounds the batch).
const maxChunk = 256 << 10

func (s *Service) logs(w http.ResponseWriter, r *http.Request, node string) {
	var b protocol.LogBatch
	if err := decode(r, &b); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	owned := map[int64]bool{}
	chunks := make([]*controlplane.TaskLogChunk, 0, len(b.Chunks))
	for _, c := range b.Chunks {
		if c.Stream != "stdout" && c.Stream != "stderr" {
			httpapi.WriteError(w, r, s.log, controlplane.Invalidf("stream must be stdout or stderr"))
			return
		}
		if len(c.Data) > maxChunk || c.Offset < 0 {
			httpapi.WriteError(w, r, s.log, controlplane.Invalidf("a chunk holds at most %d bytes at a non-negative offset", maxChunk))
			return
		}
		if _, seen := owned[c.TaskID]; !seen {
			t, err := s.store.GetTask(r.Context(), c.TaskID)
			if err != nil {
				httpapi.WriteError(w, r, s.log, err)
				return
			}
			owned[c.TaskID] = t.NodeID == node
		}
		if !owned[c.TaskID] {
			httpapi.WriteError(w, r, s.log, fmt.Errorf("%w: task %d is not assigned to this node", controlplane.ErrForbidden, c.TaskID))
			return
		}
		chunks = append(chunks, &controlplane.TaskLogChunk{TaskID: c.TaskID, Attempt: c.Attempt, Stream: c.Stream,
			Offset: c.Offset, Data: []byte(c.Data)})
	}
	if err := s.store.AppendTaskLogs(r.Context(), chunks); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
