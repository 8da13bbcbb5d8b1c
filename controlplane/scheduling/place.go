package scheduling

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/heteroflow/heteroflow/agent/protocol"
	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/tracing"
	"github.com/heteroflow/heteroflow/scheduler/framework"
	"github.com/heteroflow/heteroflow/scheduler/model"
	"github.com/heteroflow/heteroflow/scheduler/plugins"
)

// pending is a placement assumed in the cluster, not yet bound (a gang
// member waiting at Permit, or a placement about to be bound).
type pending struct {
	task      *controlplane.Task
	placement *model.Placement
	vendors   []string
}

// requestOf maps a stored task onto the scheduler's request.
func requestOf(t *controlplane.Task) (*model.Request, error) {
	s := &t.Spec
	r := &model.Request{ID: strconv.FormatInt(t.ID, 10), DeviceCount: s.DeviceCount, MemoryMiB: int64(s.MemoryMiB),
		ComputePercent: float64(s.ComputePercent), Vendor: s.Vendor, Models: s.Models, QoS: model.QoS(s.QoS),
		Priority: s.Priority, CPUMilli: int64(s.CPUMilli), HostMemoryMiB: int64(s.HostMemoryMiB), RDMA: s.RDMA,
		GangSize: s.GangSize}
	if s.Gang != "" {
		r.Gang = s.Tenant + "/" + s.Gang // gang names are per tenant
	}
	return r, r.Normalize()
}

// placeLocked runs one cycle per queued task, by priority then age.
func (s *Service) placeLocked(ctx context.Context) error {
	if err := s.expireGangsLocked(ctx); err != nil {
		return err
	}
	queue, err := s.store.ListTasksByState(ctx, []controlplane.TaskState{controlplane.TaskQueued}, maxQueueScan)
	if err != nil {
		return err
	}
	queue = s.queueWithHeldLocked(queue)
	s.m.queue.Set(float64(len(queue)))
	now := s.now()
	// Placements of single tasks are assumed in the cluster at once and
	// made durable bindBatch at a time, one transaction each (a gang binds
	// on its own, all or nothing).
	// s.unbound holds them meanwhile (quotas count them).
	s.unbound = s.unbound[:0]
	defer func() { s.releaseUnboundLocked(s.unbound); s.unbound = nil }()
	for _, t := range queue {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if len(s.unbound) >= bindBatch {
			batch := s.unbound
			s.unbound = nil
			if err := s.bindBatchLocked(ctx, batch); err != nil {
				return err
			}
		}
		if c := s.cfg.QueueTimeout; c > 0 && now.Sub(t.CreatedAt) > c {
			if err := s.timeoutQueuedLocked(ctx, t); err != nil {
				return err
			}
			continue
		}
		if p, ok := s.snap.placed[t.ID]; ok && p.draining {
			continue // its previous run still holds devices; placed once it stops
		}
		if s.isWaiting(t.ID) || now.Before(s.backoff[t.ID]) {
			continue
		}
		pd, err := s.scheduleOneLocked(ctx, t)
		if err != nil {
			return err
		}
		if pd != nil {
			s.unbound = append(s.unbound, pd)
		}
	}
	batch := s.unbound
	s.unbound = nil
	return s.bindBatchLocked(ctx, batch)
}

// scheduleOneLocked runs one cycle for t. A single task's placement comes
// back assumed, for the caller to bind; a gang binds here once complete.
func (s *Service) scheduleOneLocked(ctx context.Context, t *controlplane.Task) (*pending, error) {
	req, err := requestOf(t)
	if err != nil {
		return nil, s.failLocked(ctx, t, nil, "not schedulable: "+err.Error())
	}
	s.poolRequest(t, req)
	s.cur = t
	// The cycle continues the trace of the request that submitted the task.
	ctx, span := tracing.Tracer().Start(tracing.Tasks.Continue(ctx, t.ID), "scheduling.cycle",
		trace.WithAttributes(attribute.Int64("task.id", t.ID)))
	defer span.End()
	began := time.Now()
	res, err := s.fw.Schedule(ctx, req, framework.ScheduleOptions{Diagnose: true})
	if errors.Is(err, framework.ErrUnschedulable) && t.Spec.AllowBestEffort && req.QoS == model.QoSSilver {
		// No device that enforces Silver can take it: the task allows a
		// shared, unenforced run, so look again with that.
		be := *req
		be.BestEffort = true
		if nerr := be.Normalize(); nerr == nil {
			s.poolRequest(t, &be)
			if bres, berr := s.fw.Schedule(ctx, &be, framework.ScheduleOptions{Diagnose: true}); berr == nil {
				req, res, err = &be, bres, nil
			}
		}
	}
	took := time.Since(began).Seconds()
	s.cur = nil
	switch {
	case errors.Is(err, framework.ErrUnschedulable):
		s.m.cycle.WithLabelValues("unschedulable").Observe(took)
		span.SetAttributes(attribute.String("scheduling.result", "unschedulable"))
		return nil, s.unschedulableLocked(ctx, t, req, res)
	case err != nil:
		s.m.cycle.WithLabelValues("error").Observe(took)
		span.SetStatus(codes.Error, err.Error())
		s.log.Warn("scheduling cycle failed", "task", t.ID, "err", err)
		s.backoffLocked(t.ID)
		return nil, nil
	}
	s.m.cycle.WithLabelValues("placed").Observe(took)
	s.m.attempts.WithLabelValues("placed").Inc()
	span.SetAttributes(attribute.String("scheduling.result", "placed"), attribute.String("node", res.Placement.Node))
	tracing.Tasks.Remember(ctx, t.ID) // a gang member binds later, from this cycle
	pd := &pending{task: t, placement: res.Placement, vendors: s.vendorsOf(res.Placement)}
	if res.Waiting {
		s.waiting[req.Gang] = append(s.waiting[req.Gang], pd)
		reserved, size := s.gang().Progress(req.Gang)
		return nil, s.recordWhyLocked(ctx, t, whyDoc{Summary: fmt.Sprintf("gang %s: %d of %d members placed; none starts until all are",
			t.Spec.Gang, reserved, size), Gang: &gangWhy{Name: t.Spec.Gang, Reserved: reserved, Size: size},
			Held: &heldWhy{Node: res.Placement.Node, Slices: res.Placement.Slices}})
	}
	if req.Gang == "" {
		return pd, nil
	}
	group := append(s.waiting[req.Gang], pd)
	delete(s.waiting, req.Gang)
	s.gang().Drop(req.Gang)
	return nil, s.bindLocked(ctx, group)
}

func (s *Service) gang() *plugins.Gang {
	if p, ok := s.fw.Plugin(plugins.NameGang); ok {
		return p.(*plugins.Gang)
	}
	return nil
}

func (s *Service) isWaiting(id int64) bool {
	for _, ms := range s.waiting {
		for _, m := range ms {
			if m.task.ID == id {
				return true
			}
		}
	}
	return false
}

func (s *Service) vendorsOf(p *model.Placement) []string {
	ni, err := s.snap.cl.Node(p.Node)
	if err != nil {
		return nil
	}
	out := make([]string, len(p.Slices))
	for i, sl := range p.Slices {
		out[i] = ni.Node.Devices[sl.Device].Vendor
	}
	return out
}

// bindLocked makes a group of assumed placements durable in one store
// transaction; on failure it takes them back out of the cluster.
func (s *Service) bindLocked(ctx context.Context, group []*pending) error {
	err := s.commitBindLocked(ctx, group)
	if err == nil {
		return nil
	}
	for _, pd := range group {
		_ = s.snap.cl.Release(pd.placement.TaskID)
		s.backoffLocked(pd.task.ID)
	}
	if lostRace(err) {
		s.log.Info("scheduling: bind lost a race (task changed meanwhile)", "task", group[0].task.ID, "err", err)
		return nil
	}
	return err
}

// commitBindLocked writes the group's bindings in one transaction and, once
// committed, records them as placed; on error nothing is written and the
// placements stay assumed for the caller to release.
func (s *Service) commitBindLocked(ctx context.Context, group []*pending) error {
	bs := make([]controlplane.Binding, 0, len(group))
	spans := make([]trace.Span, 0, len(group))
	defer func() {
		for _, sp := range spans {
			sp.End()
		}
	}()
	for _, pd := range group {
		// One bind span per task, in that task's trace; the agent continues
		// it from the assignment.
		bctx, span := tracing.Tracer().Start(tracing.Tasks.Continue(ctx, pd.task.ID), "scheduling.bind",
			trace.WithAttributes(attribute.Int64("task.id", pd.task.ID), attribute.String("node", pd.placement.Node)))
		spans = append(spans, span)
		b, err := s.binding(bctx, pd)
		if err != nil {
			return err
		}
		tracing.Tasks.Remember(bctx, pd.task.ID) // the first heartbeat reporting it continues here
		bs = append(bs, b)
	}
	if _, err := s.store.BindTasks(ctx, bs); err != nil {
		return err
	}
	now := s.now()
	for i, pd := range group {
		t := pd.task
		a := bs[i].Allocations[0]
		s.snap.placed[t.ID] = &placed{key: controlplane.AllocationKey{TaskID: t.ID, Attempt: a.Attempt}, node: pd.placement.Node,
			priority: t.Spec.Priority, qos: model.QoS(t.Spec.QoS), tenant: t.Spec.Tenant, project: t.Spec.Project,
			vendor: pd.vendors, slices: pd.placement.Slices, since: now, gang: t.Spec.Gang != ""}
		delete(s.backoff, t.ID)
		delete(s.attempts, t.ID)
		s.admissionWrittenLocked(t.ID, true)
		s.m.binds.Inc()
		s.m.wait.WithLabelValues(t.Spec.Tenant).Observe(now.Sub(t.CreatedAt).Seconds())
		if s.notify != nil {
			s.notify.NotifyNode(pd.placement.Node)
		}
	}
	return nil
}

// binding turns a placement into ledger rows, the agent's run assignment
// and the queued → scheduled transition.
func (s *Service) binding(ctx context.Context, pd *pending) (controlplane.Binding, error) {
	t, p := pd.task, pd.placement
	ni, err := s.snap.cl.Node(p.Node)
	if err != nil {
		return controlplane.Binding{}, err
	}
	base := controlplane.Allocation{NodeID: p.Node, DevicePos: -1, PartStart: -1, QoS: t.Spec.QoS,
		Tenant: t.Spec.Tenant, Project: t.Spec.Project, Priority: t.Spec.Priority}
	var rows []*controlplane.Allocation
	var devs []protocol.DeviceSlice
	for _, sl := range p.Slices {
		d := ni.Node.Devices[sl.Device]
		a := base
		a.DevicePos, a.DeviceIndex, a.DeviceUUID, a.Vendor, a.Model = sl.Device, d.Index, d.UUID, d.Vendor, d.Model
		a.MemoryMiB, a.ComputeMilli, a.QoS = sl.MemoryMiB, int(sl.ComputeMilli), controlplane.QoS(sl.QoS)
		a.Isolation, a.Profile, a.PartStart = sl.Isolation, sl.Profile, sl.Start
		rows = append(rows, &a)
		devs = append(devs, protocol.DeviceSlice{Vendor: d.Vendor, Index: d.Index, UUID: d.UUID, MemoryMiB: int(sl.MemoryMiB),
			ComputePercent: int(sl.ComputeMilli) / 10, Isolation: sl.Isolation, Profile: sl.Profile, Card: d.Card, Chip: d.Chip})
	}
	if len(rows) == 0 {
		a := base
		rows = append(rows, &a) // host-only task: one row keeps its CPU/memory in the ledger
	}
	rows[0].CPUMilli, rows[0].HostMemoryMiB = p.CPUMilli, p.MemMiB
	spec := protocol.TaskSpec{TaskID: t.ID, Attempt: t.Attempt, Name: t.Spec.Name, Command: t.Spec.Command,
		Image: t.Spec.Image, Args: t.Spec.Args, Env: t.Spec.Env, SecretEnv: t.Spec.SecretEnv, QoS: string(t.Spec.QoS),
		TimeoutSeconds: t.Spec.TimeoutSeconds, Devices: devs, TraceParent: protocol.TraceParent(ctx)}
	spec.Tenant, spec.Owner = t.Spec.Tenant, t.Owner // they choose the local account the task runs as
	payload, err := json.Marshal(spec)
	if err != nil {
		return controlplane.Binding{}, err
	}
	node := p.Node
	return controlplane.Binding{Allocations: rows,
		Assignment: &controlplane.Assignment{NodeID: node, Kind: controlplane.AssignRun, TaskID: t.ID, Payload: payload},
		Transition: s.throughAdmission(controlplane.Transition{TaskID: t.ID, From: controlplane.TaskQueued,
			To: controlplane.TaskScheduled, Reason: placementReason(p, ni), Actor: "scheduler", NodeID: &node})}, nil
}

func placementReason(p *model.Placement, ni *model.NodeInfo) string {
	r := "placed on " + p.Node
	for i, sl := range p.Slices {
		sep := ", "
		if i == 0 {
			sep = ": "
		}
		d := ni.Node.Devices[sl.Device]
		r += fmt.Sprintf("%s%s %s #%d %d%%/%dMiB %s", sep, d.Vendor, d.Model, d.Index, sl.ComputeMilli/10, sl.MemoryMiB, sl.Isolation)
	}
	for _, sl := range p.Slices {
		if sl.Isolation == model.IsolationBestEffort {
			r += "; best-effort: no device that enforces Silver (CUDA MPS, HAMi-core, vendor limits) could take it, " +
				"so it shares the device without enforced limits, as the task allows"
			break
		}
	}
	return r
}

func (s *Service) backoffLocked(id int64) {
	s.attempts[id]++
	s.backoff[id] = s.now().Add(s.cfg.backoff(s.attempts[id]))
}
