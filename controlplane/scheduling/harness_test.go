package scheduling

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/agent/protocol"
	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/postgres"
	"github.com/heteroflow/heteroflow/controlplane/postgres/pgtest"
	"github.com/heteroflow/heteroflow/controlplane/sqlite"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// clock is a manual clock shared by the store and the service.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type harness struct {
	t     testing.TB
	ctx   context.Context
	db    Store
	clk   *clock
	svc   *Service
	reg   *prometheus.Registry
	nodes map[string]*fakeAgent
	order []string

	auditMu sync.Mutex
	audited []*controlplane.AuditEntry // what the service sent to the audit log
}

func newHarness(t testing.TB, cfg Config) *harness {
	t.Helper()
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	ctx := context.Background()
	// HETEROFLOW_TEST_STORE=postgres runs the same scenarios on PostgreSQL.
	var db Store
	if pgtest.Selected() {
		db = pgtest.OpenWith(t, postgres.Options{Now: clk.Now})
	} else {
		sdb, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "hf.db"), sqlite.Options{Now: clk.Now})
		require.NoError(t, err)
		t.Cleanup(func() { _ = sdb.Close() })
		db = sdb
	}
	reg := prometheus.NewRegistry()
	h := &harness{t: t, ctx: ctx, db: db, clk: clk, reg: reg, nodes: map[string]*fakeAgent{}}
	svc, err := New(Options{Store: db, Config: cfg, Logger: slog.New(slog.DiscardHandler), Registry: reg, Now: clk.Now, Holder: "test",
		Audit: func(e *controlplane.AuditEntry) {
			h.auditMu.Lock()
			defer h.auditMu.Unlock()
			h.audited = append(h.audited, e)
		}})
	require.NoError(t, err)
	h.svc = svc
	return h
}

// serviceOn is a second scheduler on st (a wrapper of h.db that counts or
// races calls), on the harness's clock, with default config.
func (h *harness) serviceOn(st Store) *Service {
	h.t.Helper()
	svc, err := New(Options{Store: st, Logger: slog.New(slog.DiscardHandler), Registry: prometheus.NewRegistry(), Now: h.clk.Now, Holder: "test"})
	require.NoError(h.t, err)
	return svc
}

// addNode enrolls a node with count devices of vendor/model.
func (h *harness) addNode(id, vendor, model string, count int, memMiB int64) *fakeAgent {
	h.t.Helper()
	tok := &controlplane.BootstrapToken{Prefix: id, TokenHash: "hash-" + id, ExpiresAt: h.clk.Now().Add(time.Hour)}
	require.NoError(h.t, h.db.CreateBootstrapToken(h.ctx, tok))
	snap := inventory.Snapshot{Vendor: vendor}
	for i := 0; i < count; i++ {
		m := memMiB
		snap.Devices = append(snap.Devices, inventory.Device{Index: i, Model: model, MemoryTotalMiB: &m})
	}
	n := &controlplane.Node{ID: id, Hostname: id + ".lab", State: controlplane.NodeOnline, CPUCount: 64, MemoryTotalMiB: 512000,
		Inventory: []inventory.Snapshot{snap}}
	require.NoError(h.t, h.db.EnrollNode(h.ctx, tok.TokenHash, n))
	a := &fakeAgent{h: h, id: id, inv: []inventory.Snapshot{snap}, runs: map[int64]*run{}}
	a.heartbeat()
	h.nodes[id] = a
	h.order = append(h.order, id)
	return a
}

func (h *harness) submit(spec controlplane.TaskSpec) *controlplane.Task {
	h.t.Helper()
	if len(spec.Command) == 0 {
		spec.Command = []string{"train.sh"}
	}
	require.NoError(h.t, spec.Validate())
	t := &controlplane.Task{Spec: spec}
	require.NoError(h.t, h.db.CreateTask(h.ctx, t))
	return t
}

func (h *harness) task(id int64) *controlplane.Task {
	t, err := h.db.GetTask(h.ctx, id)
	require.NoError(h.t, err)
	return t
}

// step advances the clock, runs one full tick and lets every agent act.
func (h *harness) step() {
	h.t.Helper()
	h.clk.Add(time.Second)
	require.NoError(h.t, h.svc.Tick(h.ctx, true))
	// The agent API's once-a-second sweep: cancels for runs the ledger
	// stopped (agentapi.Service.Run does exactly these store calls).
	stops, err := h.db.RunsToStop(h.ctx, h.clk.Now().Add(-time.Hour))
	require.NoError(h.t, err)
	for _, r := range stops {
		require.NoError(h.t, h.db.CreateAssignment(h.ctx, &controlplane.Assignment{NodeID: r.NodeID,
			Kind: controlplane.AssignCancel, TaskID: r.TaskID, Attempt: r.Attempt, Payload: json.RawMessage(`{}`)}))
	}
	for _, id := range h.order {
		h.nodes[id].step()
	}
}

// run is one task attempt an agent runs; it ends after left steps.
type run struct {
	attempt int
	left    int
}

// fakeAgent is a test double of a node agent: it reads its assignments,
// reports status and heartbeats through the same store calls the agent
// API handlers make (controlplane/agentapi), with running tasks finishing
// after their "duration" label in steps (default 3).
type fakeAgent struct {
	h    *harness
	id   string
	inv  []inventory.Snapshot
	seq  uint64
	runs map[int64]*run
	down bool
	// ownHeartbeats: the test heartbeats this agent itself (step does not).
	ownHeartbeats bool
}

func (a *fakeAgent) status(taskID int64, to controlplane.TaskState, reason string, assignment int64) {
	a.seq++
	var exit *int
	if to == controlplane.TaskSucceeded {
		zero := 0
		exit = &zero
	}
	_, err := a.h.db.ApplyNodeStatus(a.h.ctx, controlplane.NodeStatus{NodeID: a.id, Seq: a.seq, TaskID: taskID, To: to,
		Reason: reason, ExitCode: exit, AssignmentID: assignment})
	require.NoError(a.h.t, err)
}

func (a *fakeAgent) heartbeat() {
	var rs []protocol.RunningTask
	for id, r := range a.runs {
		rs = append(rs, protocol.RunningTask{TaskID: id, Attempt: r.attempt})
	}
	raw, err := json.Marshal(rs)
	require.NoError(a.h.t, err)
	_, err = a.h.db.RecordHeartbeat(a.h.ctx, a.id, controlplane.NodeHeartbeat{At: a.h.clk.Now(), Health: "ok", CPUCount: 64,
		MemoryTotalMiB: 512000, Inventory: a.inv, Running: raw})
	require.NoError(a.h.t, err)
}

func (a *fakeAgent) step() {
	if a.down {
		return
	}
	open, err := a.h.db.OpenAssignments(a.h.ctx, a.id)
	require.NoError(a.h.t, err)
	for _, as := range open {
		switch as.Kind {
		case controlplane.AssignRun:
			var spec protocol.TaskSpec
			require.NoError(a.h.t, json.Unmarshal(as.Payload, &spec))
			t := a.h.task(as.TaskID)
			if _, dup := a.runs[as.TaskID]; dup || t.State != controlplane.TaskScheduled || t.NodeID != a.id {
				require.NoError(a.h.t, a.h.db.CloseAssignment(a.h.ctx, as.ID, json.RawMessage(`"skipped"`)))
				continue
			}
			d := 3
			if v := t.Spec.Labels["duration"]; v != "" {
				_, _ = fmt.Sscan(v, &d)
			}
			a.runs[as.TaskID] = &run{attempt: as.Attempt, left: d}
			a.status(as.TaskID, controlplane.TaskRunning, "started", 0)
		case controlplane.AssignCancel:
			if r, ok := a.runs[as.TaskID]; ok && r.attempt == as.Attempt {
				delete(a.runs, as.TaskID)
				a.status(as.TaskID, controlplane.TaskCancelled, "stopped on request", as.ID)
			} else {
				a.status(0, "", "", as.ID)
			}
		}
	}
	for id, r := range a.runs {
		r.left--
		if r.left <= 0 {
			delete(a.runs, id)
			a.status(id, controlplane.TaskSucceeded, "exit 0", 0)
		}
	}
	if !a.ownHeartbeats {
		a.heartbeat()
	}
}
