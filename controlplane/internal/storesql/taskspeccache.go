package storesql

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// The scheduler reads its queues every tick (ListTasksByState: submitted,
// queued, and every scheduled or running task), while a task's spec is
// written once, by its insert: the only updates of a task row are
// transitions (state, reason, attempt, node, exit code, times) and the
// submit-key expiry, and the owner is cleared by its user's deletion. So
// the queue reads fetch only those columns and take each spec from
// specCache, decoded once per task from a second read of the tasks not
// seen before. Decoding every task's JSON columns on every read was up to a
// quarter of the loop's tick at 5,000 nodes (docs/BENCHMARKS.md).

// TaskStateCols are the columns of a task that change after its insert.
const TaskStateCols = `id, state, COALESCE(owner_id, 0), owner, attempt, node_id, exit_code, reason,
	created_at, updated_at, started_at, finished_at`

// taskSpecFields are the spec columns (never updated), read by rawSpec.
const taskSpecFields = `name, command, image, args, env, device_count, memory_mib, compute_percent, vendor,
	models, qos, priority, timeout_seconds, max_retries, labels, tenant, project, cpu_milli, host_memory_mib,
	rdma, gang, gang_size, secret_env, allow_best_effort`

// taskSpecCols are the spec columns after the id and creation time that
// key the cache.
const taskSpecCols = `id, created_at, ` + taskSpecFields

// taskStateDest are the scan destinations of TaskStateCols.
func taskStateDest(d Dialect, t *controlplane.Task) []any {
	return []any{&t.ID, &t.State, &t.OwnerID, &t.Owner, &t.Attempt, &t.NodeID, &t.ExitCode, &t.Reason,
		d.ScanTime(&t.CreatedAt), d.ScanTime(&t.UpdatedAt), d.ScanNullTime(&t.StartedAt), d.ScanNullTime(&t.FinishedAt)}
}

// rawSpec holds a spec's JSON columns between the scan and their decoding.
type rawSpec struct{ command, args, env, models, labels, secretEnv []byte }

// dest are the scan destinations of taskSpecFields into s.
func (r *rawSpec) dest(s *controlplane.TaskSpec) []any {
	return []any{&s.Name, &r.command, &s.Image, &r.args, &r.env, &s.DeviceCount, &s.MemoryMiB, &s.ComputePercent,
		&s.Vendor, &r.models, &s.QoS, &s.Priority, &s.TimeoutSeconds, &s.MaxRetries, &r.labels, &s.Tenant, &s.Project,
		&s.CPUMilli, &s.HostMemoryMiB, &s.RDMA, &s.Gang, &s.GangSize, &r.secretEnv, &s.AllowBestEffort}
}

// decode fills s's JSON-encoded fields (of task id, for the error).
func (r *rawSpec) decode(id int64, s *controlplane.TaskSpec) error {
	if err := storeutil.DecodeSpec(s, r.command, r.args, r.env, r.models, r.labels); err != nil {
		return fmt.Errorf("task %d: %w", id, err)
	}
	if err := storeutil.DecodeSecretEnv(s, r.secretEnv); err != nil {
		return fmt.Errorf("task %d: %w", id, err)
	}
	return nil
}

// ScanTaskState reads one row of TaskStateCols: a task without its spec.
func ScanTaskState(d Dialect, row Row) (*controlplane.Task, error) {
	var t controlplane.Task
	if err := row.Scan(taskStateDest(d, &t)...); err != nil {
		return nil, err
	}
	return &t, nil
}

// cachedSpec is one task's decoded spec; createdAt tells a task from
// another that was given the same id later (a restored database).
type cachedSpec struct {
	id        int64
	createdAt time.Time
	spec      controlplane.TaskSpec
}

func scanTaskSpec(d Dialect, row Row) (*cachedSpec, error) {
	var c cachedSpec
	var raw rawSpec
	if err := row.Scan(append([]any{&c.id, d.ScanTime(&c.createdAt)}, raw.dest(&c.spec)...)...); err != nil {
		return nil, err
	}
	if err := raw.decode(c.id, &c.spec); err != nil {
		return nil, err
	}
	return &c, nil
}

// specCache holds decoded task specs by task id. Readers share an entry's
// slices and maps: a spec from ListTasksByState is read-only.
type specCache struct {
	mu sync.Mutex
	m  map[int64]*cachedSpec
}

// maxCachedSpecs bounds the cache: finished tasks' entries are never
// looked up again, and past the bound the cache starts over (the next
// reads decode what they need once more).
const maxCachedSpecs = 200_000

// specFetchChunk bounds the ids of one spec read (bind parameters).
const specFetchChunk = 1000

func newSpecCache() *specCache { return &specCache{m: map[int64]*cachedSpec{}} }

// fill sets the spec of every task the cache knows and returns the ids of
// the others.
func (c *specCache) fill(tasks []*controlplane.Task) (missing []int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range tasks {
		if e, ok := c.m[t.ID]; ok && e.createdAt.Equal(t.CreatedAt) {
			t.Spec = e.spec
		} else {
			missing = append(missing, t.ID)
		}
	}
	return missing
}

func (c *specCache) put(specs []*cachedSpec) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m)+len(specs) > maxCachedSpecs {
		clear(c.m)
	}
	for _, e := range specs {
		c.m[e.id] = e
	}
}

// withSpecs completes tasks read with TaskStateCols with their specs, from
// the cache or, for the tasks it lacks, one more read. A task deleted
// between the two reads is left out, as a later read would.
func (q Queries) withSpecs(ctx context.Context, tasks []*controlplane.Task) ([]*controlplane.Task, error) {
	gone, err := q.fillSpecs(ctx, tasks)
	if err != nil || len(gone) == 0 {
		return tasks, err
	}
	out := tasks[:0]
	for _, t := range tasks {
		if !gone[t.ID] {
			out = append(out, t)
		}
	}
	return out, nil
}

// FillSpecs is withSpecs for tasks a store's own statement just returned
// with TaskStateCols (the scheduler's batched transitions): every one
// must still exist.
func (q Queries) FillSpecs(ctx context.Context, tasks []*controlplane.Task) error {
	gone, err := q.fillSpecs(ctx, tasks)
	for id := range gone {
		return fmt.Errorf("spec of task %d: %w", id, controlplane.ErrNotFound)
	}
	return err
}

// fillSpecs sets every task's spec and returns the ids of those no longer
// stored.
func (q Queries) fillSpecs(ctx context.Context, tasks []*controlplane.Task) (gone map[int64]bool, err error) {
	missing := q.specs.fill(tasks)
	if len(missing) == 0 {
		return nil, nil
	}
	got := make(map[int64]*cachedSpec, len(missing))
	for start := 0; start < len(missing); start += specFetchChunk {
		ids := missing[start:min(start+specFetchChunk, len(missing))]
		a := q.args()
		specs, err := all(ctx, q.db.Reader(), func(r Row) (*cachedSpec, error) { return scanTaskSpec(q.db, r) },
			`SELECT `+taskSpecCols+` FROM tasks WHERE id IN (`+q.inList(a, ids)+`)`, a.Vals...)
		if err != nil {
			return nil, err
		}
		q.specs.put(specs)
		for _, e := range specs {
			got[e.id] = e
		}
	}
	isMissing := make(map[int64]bool, len(missing))
	for _, id := range missing {
		isMissing[id] = true
	}
	for _, t := range tasks {
		if !isMissing[t.ID] {
			continue
		}
		if e, ok := got[t.ID]; ok && e.createdAt.Equal(t.CreatedAt) {
			t.Spec = e.spec
			continue
		}
		if gone == nil {
			gone = map[int64]bool{}
		}
		gone[t.ID] = true // deleted (or replaced) since the first read
	}
	return gone, nil
}
