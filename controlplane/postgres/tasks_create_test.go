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

func (c batchCase) prepared(t *testing.T) []storeutil.NewTask {
	out := make([]storeutil.NewTask, len(c.tasks))
	for i, task := range c.tasks {
		n, err := storeutil.PrepareTask(task)
		require.NoError(t, err)
		out[i] = n
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

// TestCreateTaskBatchFailsOnlyBadTask queues the five tasks behind a blocked
// batch so that they are tried as one statement, which fails; the one-by-one
// retry must then fail only the two bad tasks.
func TestCreateTaskBatchFailsOnlyBadTask(t *testing.T) {
	db := pgtest.Open(t)
	c := newBatchCase(t, db)
	items := c.prepared(t)

	t.Run("the batch statement is all or nothing", func(t *testing.T) {
		require.Error(t, postgres.InsertTasks(db, t.Context(), items))
		_, total, err := db.ListTasks(t.Context(), controlplane.TaskFilter{})
		require.NoError(t, err)
		require.Zero(t, total)
		for _, task := range c.tasks {
			require.Zero(t, task.ID)
		}
	})

	t.Run("group commit retries one by one", func(t *testing.T) {
		entered, gate := make(chan struct{}), make(chan struct{})
		var once sync.Once
		var mu sync.Mutex
		var sizes []int
		write := func(ctx context.Context, batch []storeutil.NewTask) error {
			once.Do(func() { close(entered); <-gate })
			mu.Lock()
			sizes = append(sizes, len(batch))
			mu.Unlock()
			return postgres.InsertTasks(db, ctx, batch)
		}
		g := storeutil.NewGroupCommit(256, 1, write)
		defer g.Close()

		blocker, err := storeutil.PrepareTask(&controlplane.Task{Spec: storetest.MinimalSpec("blocker")})
		require.NoError(t, err)
		blockerErr := make(chan error, 1)
		go func() { blockerErr <- g.Do(t.Context(), blocker) }()
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
		close(gate)
		wg.Wait()
		require.NoError(t, <-blockerErr)

		require.Equal(t, []int{1, len(items), 1, 1, 1, 1, 1}, sizes, "blocker, the failed batch, then one by one")
		c.check(t, db, got)
	})
}

// TestCreateTaskConcurrentWithBadTasks goes through CreateTask itself:
// however the submissions are batched, each caller gets its own result.
func TestCreateTaskConcurrentWithBadTasks(t *testing.T) {
	db := pgtest.Open(t)
	var cases []batchCase
	for range 8 {
		cases = append(cases, newBatchCase(t, db))
	}
	got := make([][]error, len(cases))
	var wg sync.WaitGroup
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
}
