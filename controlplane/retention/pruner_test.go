package retention_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/retention"
	"github.com/heteroflow/heteroflow/controlplane/sqlite"
	"github.com/heteroflow/heteroflow/controlplane/storetest"
)

func open(t *testing.T) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "r.db"), sqlite.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// history writes a finished task and a running one, each with two 64-byte
// log chunks, and n audit entries a day old naming nothing.
func history(t *testing.T, db *sqlite.DB, n int) (done, running *controlplane.Task) {
	t.Helper()
	ctx := t.Context()
	u := &controlplane.User{Username: "alice", Role: controlplane.RoleUser, Status: controlplane.UserActive}
	require.NoError(t, db.CreateUser(ctx, u))
	mk := func(to ...controlplane.TaskState) *controlplane.Task {
		task := &controlplane.Task{OwnerID: u.ID, Spec: storetest.MinimalSpec(fmt.Sprintf("t-%d", len(to)))}
		require.NoError(t, db.CreateTask(ctx, task))
		for _, s := range to {
			var err error
			task, err = db.TransitionTask(ctx, controlplane.Transition{TaskID: task.ID, From: task.State, To: s, Actor: "test"})
			require.NoError(t, err)
		}
		for i := range 2 {
			require.NoError(t, db.AppendTaskLogs(ctx, []*controlplane.TaskLogChunk{{TaskID: task.ID, Stream: "stdout",
				Offset: int64(i * 64), Data: make([]byte, 64)}}))
		}
		return task
	}
	done = mk(controlplane.TaskQueued, controlplane.TaskScheduled, controlplane.TaskRunning, controlplane.TaskSucceeded)
	running = mk(controlplane.TaskQueued, controlplane.TaskScheduled, controlplane.TaskRunning)
	for i := range n {
		require.NoError(t, db.AppendAudit(ctx, &controlplane.AuditEntry{At: time.Now().Add(-24 * time.Hour), Actor: "bob",
			Module: controlplane.ModuleAPI, Level: controlplane.LevelInfo, Action: "x", Target: fmt.Sprintf("node/%d", i)}))
	}
	return done, running
}

func TestPruneOnceRemovesWhatIsPastItsBoundsAndCountsIt(t *testing.T) {
	db := open(t)
	done, running := history(t, db, 2500) // more than one batch of audit rows
	reg := prometheus.NewRegistry()
	p, err := retention.New(retention.Options{Store: db, Registry: reg,
		Now:    func() time.Time { return time.Now().Add(2 * time.Hour) }, // the task finished 2 h ago
		Config: retention.Config{AuditMaxAge: time.Hour, TaskLogMaxAge: time.Hour, TaskEventMaxAge: time.Hour}})
	require.NoError(t, err)

	rep, err := p.PruneOnce(t.Context())
	require.NoError(t, err)
	require.EqualValues(t, 2500, rep[controlplane.RetainAudit].Rows)
	require.Positive(t, rep[controlplane.RetainAudit].Bytes)
	require.Equal(t, controlplane.Pruned{Rows: 2, Bytes: 128}, rep[controlplane.RetainTaskLogs])
	require.EqualValues(t, 5, rep[controlplane.RetainTaskEvents].Rows, "submitted, queued, scheduled, running, succeeded")

	rows := func(kind string) float64 {
		return testutil.ToFloat64(mustVec(t, reg, "heteroflow_retention_pruned_rows_total", kind))
	}
	require.Equal(t, 2500.0, rows(controlplane.RetainAudit))
	require.Equal(t, 2.0, rows(controlplane.RetainTaskLogs))
	require.Equal(t, 5.0, rows(controlplane.RetainTaskEvents))
	require.Equal(t, 128.0, testutil.ToFloat64(mustVec(t, reg, "heteroflow_retention_pruned_bytes_total", controlplane.RetainTaskLogs)))

	chunks, err := db.ReadTaskLogs(t.Context(), done.ID, 0, "stdout", 0, 10)
	require.NoError(t, err)
	require.Empty(t, chunks)
	chunks, err = db.ReadTaskLogs(t.Context(), running.ID, 0, "stdout", 0, 10)
	require.NoError(t, err)
	require.Len(t, chunks, 2, "a running task keeps its logs")
	evs, err := db.ListTaskEvents(t.Context(), running.ID)
	require.NoError(t, err)
	require.Len(t, evs, 4, "and its events")

	rep, err = p.PruneOnce(t.Context())
	require.NoError(t, err)
	for kind, got := range rep {
		require.Zero(t, got.Rows, kind)
	}
}

func TestZeroBoundsKeepEverything(t *testing.T) {
	db := open(t)
	done, _ := history(t, db, 10)
	p, err := retention.New(retention.Options{Store: db, Now: func() time.Time { return time.Now().Add(1000 * time.Hour) }})
	require.NoError(t, err)
	rep, err := p.PruneOnce(t.Context())
	require.NoError(t, err)
	require.Equal(t, retention.Report{controlplane.RetainSubmitKeys: {}}, rep,
		"only idempotency keys have a default bound (and the history holds none)")
	chunks, err := db.ReadTaskLogs(t.Context(), done.ID, 0, "stdout", 0, 10)
	require.NoError(t, err)
	require.Len(t, chunks, 2)
}

// TestOnlyTheLeaseHolderPrunes: a second server that holds the lease keeps
// this one from pruning; once it gives the lease up, this one prunes.
func TestOnlyTheLeaseHolderPrunes(t *testing.T) {
	db := open(t)
	history(t, db, 5)
	ok, err := db.AcquireLease(t.Context(), retention.LeaseName, "other", time.Hour)
	require.NoError(t, err)
	require.True(t, ok)
	reg := prometheus.NewRegistry()
	p, err := retention.New(retention.Options{Store: db, Registry: reg,
		Config: retention.Config{Interval: 20 * time.Millisecond, Holder: "me", AuditMaxAge: time.Hour}})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); p.Run(ctx) }()
	defer func() { cancel(); <-done }()

	audited := func() int {
		_, n, err := db.ListAudit(t.Context(), controlplane.AuditFilter{})
		require.NoError(t, err)
		return n
	}
	// Several intervals pass without the lease.
	time.Sleep(200 * time.Millisecond)
	require.Equal(t, 5, audited())
	require.NoError(t, db.ReleaseLease(t.Context(), retention.LeaseName, "other"))
	require.Eventually(t, func() bool { return audited() == 0 }, 10*time.Second, 20*time.Millisecond)
	require.Equal(t, 5.0, testutil.ToFloat64(mustVec(t, reg, "heteroflow_retention_pruned_rows_total", controlplane.RetainAudit)))
}

func mustVec(t *testing.T, reg *prometheus.Registry, name, kind string) prometheus.Collector {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "kind" && l.GetValue() == kind {
					return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "x"}, func() float64 { return m.GetCounter().GetValue() })
				}
			}
		}
	}
	t.Fatalf("%s{kind=%q} not exported", name, kind)
	return nil
}
