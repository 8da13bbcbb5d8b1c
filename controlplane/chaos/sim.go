package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/heteroflow/heteroflow/agent/protocol"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// runLog records every run of every task the simulated agents execute, to
// prove that no task ran twice at once.
type runLog struct {
	mu         sync.Mutex
	active     map[int64]string // task → "node/attempt" running now
	runs       int
	violations []string
}

func (l *runLog) begin(task int64, who string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.runs++
	if prev, ok := l.active[task]; ok {
		l.violations = append(l.violations, fmt.Sprintf("task %d started on %s while running on %s", task, who, prev))
	}
	l.active[task] = who
}

func (l *runLog) end(task int64, who string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.active[task] == who {
		delete(l.active, task)
	}
}

type simRun struct {
	spec  protocol.TaskSpec
	start time.Time
	timer *time.Timer
	ended bool
}

// simAgent speaks the agent protocol without starting processes. Its
// outbox, sequence and handled ids are "durable": they survive kill().
type simAgent struct {
	name   string
	h      *Harness
	cl     *apiClient
	nodeID string
	gpus   int

	mu      sync.Mutex
	seq     uint64
	outbox  []protocol.StatusUpdate // not yet acknowledged
	handled map[int64]bool
	running map[string]*simRun
	poke    chan struct{}

	life   sync.Mutex
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func simInventory(name string, gpus int) []inventory.Snapshot {
	devs := make([]inventory.Device, gpus)
	mem := int64(81559)
	ok := "ok"
	for i := range devs {
		uuid := fmt.Sprintf("GPU-%s-%d", name, i)
		devs[i] = inventory.Device{Index: i, UUID: &uuid, Model: "NVIDIA H100 80GB HBM3", MemoryTotalMiB: &mem, Health: &ok}
	}
	drv := "550.54.15"
	return []inventory.Snapshot{{Vendor: inventory.VendorNVIDIA, DriverVersion: &drv, Devices: devs}}
}

func (a *simAgent) enroll(ctx context.Context, token string) error {
	var resp protocol.EnrollResponse
	err := retry(ctx, time.Minute, func() error {
		return a.cl.do(ctx, "POST", "/api/v1/agents/enroll", protocol.EnrollRequest{Token: token, Hostname: a.name,
			OS: "linux", Arch: "amd64", Version: "chaos", Inventory: simInventory(a.name, a.gpus)}, &resp)
	})
	if err != nil {
		return fmt.Errorf("enroll %s: %w", a.name, err)
	}
	a.nodeID = resp.NodeID
	a.cl.bearer.Store(resp.APIKey)
	return nil
}

// start runs the agent's loops until kill or stop.
func (a *simAgent) start(ctx context.Context) {
	a.life.Lock()
	defer a.life.Unlock()
	ctx, a.cancel = context.WithCancel(ctx)
	for _, f := range []func(context.Context){a.pollLoop, a.heartbeatLoop, a.sendLoop} {
		a.wg.Add(1)
		go func() { defer a.wg.Done(); f(ctx) }()
	}
}

// kill stops the loops at once (as kill -9 of the agent); tasks keep
// running and their ends wait in the outbox for the next start.
func (a *simAgent) kill() {
	a.life.Lock()
	defer a.life.Unlock()
	if a.cancel != nil {
		a.cancel()
		a.wg.Wait()
		a.cancel = nil
	}
}

func (a *simAgent) append(u protocol.StatusUpdate) {
	a.mu.Lock()
	a.seq++
	u.Seq = a.seq
	if u.At.IsZero() {
		u.At = time.Now().UTC()
	}
	a.outbox = append(a.outbox, u)
	a.mu.Unlock()
	select {
	case a.poke <- struct{}{}:
	default:
	}
}

func (a *simAgent) sendLoop(ctx context.Context) {
	for ctx.Err() == nil {
		a.mu.Lock()
		batch := append([]protocol.StatusUpdate(nil), a.outbox[:min(len(a.outbox), 200)]...)
		a.mu.Unlock()
		if len(batch) > 0 {
			var ack protocol.StatusAck
			if err := a.cl.do(ctx, "POST", "/api/v1/agents/status", protocol.StatusBatch{Updates: batch}, &ack); err == nil {
				a.mu.Lock()
				n := 0
				for n < len(a.outbox) && a.outbox[n].Seq <= ack.Acked {
					n++
				}
				a.outbox = a.outbox[n:]
				more := len(a.outbox) > 0
				a.mu.Unlock()
				if more {
					continue
				}
			} else {
				a.h.count("status_errors")
				sleep(ctx, 200*time.Millisecond)
				continue
			}
		}
		select {
		case <-ctx.Done():
		case <-a.poke:
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func (a *simAgent) pollLoop(ctx context.Context) {
	for ctx.Err() == nil {
		var l protocol.AssignmentList
		if err := a.cl.do(ctx, "GET", "/api/v1/agents/assignments?wait=5s", nil, &l); err != nil {
			a.h.count("poll_errors")
			sleep(ctx, 300*time.Millisecond)
			continue
		}
		for _, it := range l.Items {
			a.dispatch(it)
		}
	}
}

func (a *simAgent) dispatch(it protocol.Assignment) {
	a.mu.Lock()
	seen := a.handled[it.ID]
	a.handled[it.ID] = true
	a.mu.Unlock()
	if seen {
		return
	}
	switch it.Kind {
	case protocol.KindRun:
		if it.Task != nil {
			a.run(*it.Task)
		}
	case protocol.KindCancel:
		if !a.stop(it.TaskID, it.Attempt, protocol.PhaseCancelled, "cancelled by the server") {
			a.append(protocol.StatusUpdate{AssignmentID: it.ID, Phase: protocol.PhaseManaged,
				Result: &protocol.ManagementResult{ID: it.ID, OK: true}})
		}
	case protocol.KindManage:
		a.append(protocol.StatusUpdate{AssignmentID: it.ID, Phase: protocol.PhaseManaged,
			Result: &protocol.ManagementResult{ID: it.ID, OK: true}})
	}
}

func runKey(id int64, attempt int) string { return fmt.Sprintf("%d/%d", id, attempt) }

func (a *simAgent) run(spec protocol.TaskSpec) {
	k := runKey(spec.TaskID, spec.Attempt)
	who := a.name + "/" + fmt.Sprint(spec.Attempt)
	a.h.runs.begin(spec.TaskID, who)
	r := &simRun{spec: spec, start: time.Now()}
	a.mu.Lock()
	a.running[k] = r
	a.mu.Unlock()
	a.append(protocol.StatusUpdate{TaskID: spec.TaskID, Attempt: spec.Attempt, Phase: protocol.PhaseStarted})
	d := a.h.opts.TaskMin + time.Duration(rand.Int64N(int64(a.h.opts.TaskMax-a.h.opts.TaskMin)+1))
	r.timer = time.AfterFunc(d, func() {
		code := 0
		phase := protocol.PhaseSucceeded
		if rand.IntN(100) < a.h.opts.FailPercent {
			code, phase = 1, protocol.PhaseFailed
		}
		a.finish(k, phase, &code, "")
	})
}

func (a *simAgent) finish(k, phase string, code *int, reason string) bool {
	a.mu.Lock()
	r, ok := a.running[k]
	if !ok || r.ended {
		a.mu.Unlock()
		return false
	}
	r.ended = true
	delete(a.running, k)
	a.mu.Unlock()
	a.h.runs.end(r.spec.TaskID, a.name+"/"+fmt.Sprint(r.spec.Attempt))
	if phase != protocol.PhaseSucceeded && reason == "" && code != nil {
		reason = fmt.Sprintf("exit code %d", *code)
	}
	a.append(protocol.StatusUpdate{TaskID: r.spec.TaskID, Attempt: r.spec.Attempt, Phase: phase, ExitCode: code, Reason: reason})
	return true
}

func (a *simAgent) stop(id int64, attempt int, phase, reason string) bool {
	k := runKey(id, attempt)
	a.mu.Lock()
	r, ok := a.running[k]
	a.mu.Unlock()
	if !ok {
		return false
	}
	r.timer.Stop()
	code := 143
	return a.finish(k, phase, &code, reason)
}

func (a *simAgent) heartbeatLoop(ctx context.Context) {
	for ctx.Err() == nil {
		a.mu.Lock()
		hb := protocol.Heartbeat{Health: "ok", CPUCount: 1, MemoryTotalMiB: 512 << 10, MemoryFreeMiB: 400 << 10,
			Running: []protocol.RunningTask{}, Version: "chaos"}
		for _, r := range a.running {
			hb.Running = append(hb.Running, protocol.RunningTask{TaskID: r.spec.TaskID, Attempt: r.spec.Attempt, PID: 1, StartedAt: r.start})
		}
		a.mu.Unlock()
		var resp protocol.HeartbeatResponse
		if err := a.cl.do(ctx, "POST", "/api/v1/agents/heartbeat", hb, &resp); err == nil {
			want := map[string]bool{}
			for _, e := range resp.Expected {
				want[runKey(e.TaskID, e.Attempt)] = true
			}
			for _, r := range hb.Running {
				if !want[runKey(r.TaskID, r.Attempt)] {
					a.stop(r.TaskID, r.Attempt, protocol.PhaseCancelled, "the server no longer expects this task on this node")
				}
			}
		} else {
			a.h.count("heartbeat_errors")
		}
		sleep(ctx, a.h.opts.Heartbeat)
	}
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
