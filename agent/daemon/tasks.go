package daemon

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/heteroflow/heteroflow/agent/outbox"
	"github.com/heteroflow/heteroflow/agent/protocol"
	"github.com/heteroflow/heteroflow/agent/runner"
	"github.com/heteroflow/heteroflow/agent/state"
)

// pollLoop long-polls for assignments and dispatches them; while the
// server is unreachable it backs off and resumes.
func (a *Agent) pollLoop(ctx context.Context) {
	backoff := outbox.Backoff{Min: 200 * time.Millisecond, Max: 15 * time.Second}
	path := "/api/v1/agents/assignments?wait=" + a.cfg.PollWait.String()
	for ctx.Err() == nil {
		var l protocol.AssignmentList
		if err := a.cl.do(ctx, "GET", path, nil, &l); err != nil {
			if ctx.Err() != nil {
				return
			}
			a.cfg.Logger.Warn("assignment poll failed", "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff.Next()):
			}
			continue
		}
		backoff.Reset()
		for _, it := range l.Items {
			a.dispatch(ctx, it)
		}
	}
}

func (a *Agent) dispatch(ctx context.Context, it protocol.Assignment) {
	a.mu.Lock()
	seen := a.handled[it.ID]
	a.handled[it.ID] = true
	a.mu.Unlock()
	if seen {
		return
	}
	if err := a.st.MarkHandled(it.ID); err != nil {
		a.cfg.Logger.Error("persist handled assignment", "id", it.ID, "err", err)
	}
	switch it.Kind {
	case protocol.KindRun:
		if it.Task != nil {
			a.start(ctx, it.ID, *it.Task)
		}
	case protocol.KindCancel:
		if !a.cancel(it.TaskID, it.Attempt, "cancelled by the server") {
			// Not running here (already ended, or never started): close the item.
			a.appendStatus(protocol.StatusUpdate{AssignmentID: it.ID, Phase: protocol.PhaseManaged,
				Result: &protocol.ManagementResult{ID: it.ID, OK: true}})
		}
	case protocol.KindManage:
		if it.Manage != nil {
			go a.manage(ctx, it.ID, *it.Manage)
		}
	default:
		a.cfg.Logger.Warn("unknown assignment kind", "kind", it.Kind, "id", it.ID)
	}
}

func (a *Agent) appendStatus(u protocol.StatusUpdate) {
	if u.At.IsZero() {
		u.At = time.Now().UTC()
	}
	if _, err := a.out.Append(u); err != nil {
		// The outbox is the agent's memory; without it the server's ledger
		// would go stale, so this is loud.
		a.cfg.Logger.Error("outbox append failed", "task", u.TaskID, "phase", u.Phase, "err", err)
	}
}

// start runs one task: the "started" (or "failed") update goes to the
// outbox before anything else, so a crash right after cannot lose it.
func (a *Agent) start(ctx context.Context, assignmentID int64, spec protocol.TaskSpec) {
	log := a.cfg.Logger.With("task", spec.TaskID, "attempt", spec.Attempt)
	// The start continues the server's trace of the task (its bind span).
	sctx, span := otel.Tracer("github.com/heteroflow/heteroflow/agent").Start(protocol.WithTraceParent(ctx, spec.TraceParent),
		"agent.task.start", trace.WithAttributes(attribute.Int64("task.id", spec.TaskID), attribute.Int("task.attempt", spec.Attempt)))
	defer span.End()
	h, err := a.run.Start(ctx, spec)
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
		a.self.inc("heteroflow_agent_task_starts_total", "result", "failed")
		log.Warn("task did not start", "err", err)
		a.appendStatus(protocol.StatusUpdate{TaskID: spec.TaskID, Attempt: spec.Attempt, Phase: protocol.PhaseFailed,
			Reason: "start: " + err.Error()})
		return
	}
	shimPID, shimStart := h.Shim()
	rec := state.Record{TaskID: spec.TaskID, Attempt: spec.Attempt, PID: h.PID(), PGID: h.PID(),
		ProcStart: h.ProcStart(), StartedAt: h.StartedAt(), LogDir: h.LogDir(), AssignmentID: assignmentID,
		ShimPID: shimPID, ShimStart: shimStart, WorkDir: h.WorkDir(), TimeoutSeconds: spec.TimeoutSeconds,
		Devices: h.Spec().Devices}
	if h.Container() {
		rec.Container = runner.ContainerName(spec.TaskID, spec.Attempt)
	}
	if err := a.st.Put(rec); err != nil {
		log.Error("record running task", "err", err)
	}
	t := &task{spec: h.Spec(), h: h, shipped: map[string]int64{}, trace: protocol.TraceParent(sctx)}
	a.mu.Lock()
	a.tasks[key(spec.TaskID, spec.Attempt)] = t
	a.mu.Unlock()
	a.appendStatus(protocol.StatusUpdate{TaskID: spec.TaskID, Attempt: spec.Attempt, Phase: protocol.PhaseStarted})
	a.self.inc("heteroflow_agent_task_starts_total", "result", "ok")
	a.simulateLoad()
	go a.watch(ctx, t)
}

// watch ships the task's logs while it runs, then reports its end.
func (a *Agent) watch(ctx context.Context, t *task) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for done := false; !done; {
		select {
		case <-t.h.Done():
			done = true
		case <-tick.C:
			a.shipLogs(ctx, t)
		case <-ctx.Done():
			return // the next agent start handles it as an orphan
		}
	}
	res := t.h.Wait()
	// One flush before the end is reported, so a reader who sees the task
	// finished usually sees all its output; what the server missed (it may
	// be down) follows in the background.
	fctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	complete := a.shipLogs(fctx, t)
	cancel()
	if !complete {
		go a.drainLogs(ctx, t)
	}
	outs, err := runner.ReadOutputs(t.h.LogDir())
	if err != nil {
		a.cfg.Logger.Warn("task outputs not reported", "task", t.spec.TaskID, "err", err)
	}
	a.appendStatus(protocol.StatusUpdate{TaskID: t.spec.TaskID, Attempt: t.spec.Attempt, Phase: res.Phase,
		ExitCode: res.ExitCode, Reason: res.Reason, Outputs: outs})
	a.self.inc("heteroflow_agent_tasks_finished_total", "phase", res.Phase)
	a.mu.Lock()
	delete(a.tasks, key(t.spec.TaskID, t.spec.Attempt))
	a.mu.Unlock()
	if err := a.st.Remove(t.spec.TaskID, t.spec.Attempt); err != nil && !errors.Is(err, context.Canceled) {
		a.cfg.Logger.Error("forget finished task", "task", t.spec.TaskID, "err", err)
	}
	a.simulateLoad()
}
