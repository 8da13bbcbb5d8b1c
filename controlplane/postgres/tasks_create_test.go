package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
	"github.com/heteroflow/heteroflow/controlplane/postgres"
	"github.com/heteroflow/heteroflow/controlplane/postgres/pgtest"
	"github.com/heteroflow/heteroflow/controlplane/storetest"
)

// batchCase is a batch of five tasks, two of them bad in different ways.
type batchCase struct {
	tasks []*controlplane.Task
	want  []error // nil: must succeed
}

func newBatchCase(t *testing.T, db *postgres.DB) batchCase {
	t.Helper()
	u := &controlplane.User{Username: fmt.Sprintf("batcher-%d", time.Now().UnixNano()), Role: controlplane.RoleUser}
	require.NoError(t, db.CreateUser(t.Context(), u))
	nul := storetest.MinimalSpec("nul\x00name") // PostgreSQL text cannot hold NUL
	c := batchCase{
		tasks: []*controlplane.Task{
			{Spec: storetest.FullSpec("ok-1"), OwnerID: u.ID, Reason: "r1"},
			{Spec: storetest.MinimalSpec("ghost-owner"), OwnerID: 987654321},
			{Spec: storetest.MinimalSpec("ok-2"), Owner: "svc"},
			{Spec: nul},
			{Spec: storetest.MinimalSpec("ok-3")},
		},
		want: []error{nil, controlplane.ErrNotFound, nil, controlplane.ErrInvalid, nil},
	}
	return c
}

func (c batchCase) units(t *testing.T) []postgres.WriteUnit {
	out := make([]postgres.WriteUnit, len(c.tasks))
	for i, task := range c.tasks {
		n, err := storeutil.PrepareTask(task)
		if err != nil {
			// Validation refuses NUL bytes before any SQL runs; build this
			// unit without it, so the batch statement itself fails in
			// PostgreSQL as any driver-level refusal would.
			js, jerr := storeutil.EncodeSpec(&task.Spec)
			require.NoError(t, jerr)
			n = storeutil.NewTask{Task: task, JSON: js}
		}
		out[i] = postgres.TaskUnit(n)
	}
	return out
}

func auditEntries(action string, n int) []*controlplane.AuditEntry {
	out := make([]*controlplane.AuditEntry, n)
	for i := range out {
		out[i] = &controlplane.AuditEntry{At: time.Now().UTC().Truncate(time.Microsecond), Actor: "alice",
			Module: controlplane.ModuleAPI, Level: controlplane.LevelInfo, Action: action, Result: "ok"}
	}
	return out
}

// check requires each task's own outcome and, for the good ones, that what
// CreateTask reported is what was stored, first event included.
func (c batchCase) check(t *testing.T, db *postgres.DB, got []error) {
	t.Helper()
	for i, task := range c.tasks {
		if c.want[i] != nil {
			require.ErrorIs(t, got[i], c.want[i], "task %q", task.Spec.Name)
			require.Zero(t, task.ID, "a failed task is left untouched")
			continue
		}
		require.NoError(t, got[i], "task %q must not fail with its bad neighbours", task.Spec.Name)
		stored, err := db.GetTask(t.Context(), task.ID)
		require.NoError(t, err)
		require.Equal(t, task, stored)
		evs, err := db.ListTaskEvents(t.Context(), task.ID)
		require.NoError(t, err)
		require.Len(t, evs, 1)
		require.Equal(t, storeutil.FirstEventActor(task.Owner), evs[0].Actor)
		require.Equal(t, task.Reason, evs[0].Reason)
	}
}

// TestCreateTaskBatchFailsOnlyBadTask queues the five tasks and an audit
// batch behind a blocked batch so that they are tried as one statement,
// which fails; the one-by-one retry must then fail only the two bad tasks.
func TestCreateTaskBatchFailsOnlyBadTask(t *testing.T) {
	db := pgtest.Open(t)
	c := newBatchCase(t, db)
	audit := auditEntries("batch.audit", 3)
	items := append(c.units(t), postgres.AuditUnit(audit))

	t.Run("the batch statement is all or nothing", func(t *testing.T) {
		require.Error(t, postgres.WriteUnits(db, t.Context(), items))
		_, total, err := db.ListTasks(t.Context(), controlplane.TaskFilter{})
		require.NoError(t, err)
		require.Zero(t, total)
		_, total, err = db.ListAudit(t.Context(), controlplane.AuditFilter{Query: "batch.audit"})
		require.NoError(t, err)
		require.Zero(t, total)
		for _, task := range c.tasks {
			require.Zero(t, task.ID)
		}
		for _, e := range audit {
			require.Zero(t, e.ID)
		}
	})

	t.Run("group commit retries one by one", func(t *testing.T) {
		entered, gate := make(chan struct{}), make(chan struct{})
		var once sync.Once
		var mu sync.Mutex
		var sizes []int
		write := func(ctx context.Context, batch []postgres.WriteUnit) error {
			once.Do(func() { close(entered); <-gate })
			mu.Lock()
			sizes = append(sizes, len(batch))
			mu.Unlock()
			return postgres.WriteUnits(db, ctx, batch)
		}
		g := storeutil.NewGroupCommit(256, 1, write)
		t.Cleanup(g.Close)
		var opened sync.Once
		release := func() { opened.Do(func() { close(gate) }) }
		t.Cleanup(release) // before Close, so a failed assertion cannot hang

		blocker, err := storeutil.PrepareTask(&controlplane.Task{Spec: storetest.MinimalSpec("blocker")})
		require.NoError(t, err)
		blockerErr := make(chan error, 1)
		go func() { blockerErr <- g.Do(t.Context(), postgres.TaskUnit(blocker)) }()
		<-entered
		got := make([]error, len(items))
		var wg sync.WaitGroup
		for i, n := range items {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got[i] = g.Do(t.Context(), n)
			}()
		}
		require.Eventually(t, func() bool { return g.Queued() == len(items) }, 10*time.Second, time.Millisecond)
		release()
		wg.Wait()
		require.NoError(t, <-blockerErr)

		require.Equal(t, []int{1, len(items), 1, 1, 1, 1, 1, 1}, sizes, "blocker, the failed batch, then one by one")
		c.check(t, db, got[:len(c.tasks)])
		require.NoError(t, got[len(c.tasks)], "the audit batch does not fail with the bad tasks")
		stored, total, err := db.ListAudit(t.Context(), controlplane.AuditFilter{Query: "batch.audit"})
		require.NoError(t, err)
		require.Equal(t, len(audit), total)
		byID := map[int64]*controlplane.AuditEntry{}
		for _, e := range stored {
			byID[e.ID] = e
		}
		for _, e := range audit {
			require.Equal(t, e, byID[e.ID], "each entry got its own id")
		}
	})
}

// TestCreateTaskConcurrentWithBadTasks goes through CreateTask and
// AppendAuditBatch themselves: however the writes are batched, each caller
// gets its own result.
func TestCreateTaskConcurrentWithBadTasks(t *testing.T) {
	db := pgtest.Open(t)
	var cases []batchCase
	for range 8 {
		cases = append(cases, newBatchCase(t, db))
	}
	got := make([][]error, len(cases))
	var wg sync.WaitGroup
	audits := make([][]*controlplane.AuditEntry, 8)
	auditErrs := make([]error, len(audits))
	for i := range audits {
		audits[i] = auditEntries("concurrent.audit", 4)
		if i == 3 {
			audits[i][2].Detail = "nul\x00byte" // fails this audit batch only
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			auditErrs[i] = db.AppendAuditBatch(t.Context(), audits[i])
		}()
	}
	for ci, c := range cases {
		got[ci] = make([]error, len(c.tasks))
		for i, task := range c.tasks {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got[ci][i] = db.CreateTask(t.Context(), task)
			}()
		}
	}
	wg.Wait()
	for ci, c := range cases {
		c.check(t, db, got[ci])
	}
	_, total, err := db.ListTasks(t.Context(), controlplane.TaskFilter{})
	require.NoError(t, err)
	require.Equal(t, 3*len(cases), total)
	for i, err := range auditErrs {
		if i == 3 {
			require.ErrorIs(t, err, controlplane.ErrInvalid)
			continue
		}
		require.NoError(t, err)
	}
	_, total, err = db.ListAudit(t.Context(), controlplane.AuditFilter{Query: "concurrent.audit"})
	require.NoError(t, err)
	require.Equal(t, 4*(len(audits)-1), total)
}
