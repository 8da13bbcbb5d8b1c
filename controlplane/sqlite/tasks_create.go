package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// Task submission uses group commit. All writes are serialised on one
// connection anyway, and most of a commit's cost is writing the same B-tree
// pages (task table, its indexes, the event table) to the WAL; so one
// goroutine takes every CreateTask waiting at that moment (up to
// maxCreateBatch) and inserts them in a single transaction. Under load this
// turns N commits into one; an idle store still commits each task alone
// without waiting. If a batch fails, each request is retried in its own
// transaction so that one bad task cannot fail its neighbours.
const maxCreateBatch = 256

type createReq struct {
	ctx  context.Context
	t    *controlplane.Task
	js   storeutil.SpecJSON
	done chan error // buffered(1): the committer never blocks on a caller
}

// CreateTask validates t.Spec, stores t in TaskSubmitted together with its
// first event in one transaction, and sets ID, State, Owner and timestamps.
// A non-empty t.Owner is kept; otherwise the owner's username is looked up.
func (db *DB) CreateTask(ctx context.Context, t *controlplane.Task) error {
	if err := t.Spec.Validate(); err != nil {
		return err
	}
	js, err := storeutil.EncodeSpec(&t.Spec)
	if err != nil {
		return err
	}
	r := &createReq{ctx: ctx, t: t, js: js, done: make(chan error, 1)}
	select {
	case db.creates <- r:
	case <-db.closed:
		return fmt.Errorf("create task: %w: store closed", controlplane.ErrUnavailable)
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-r.done:
		return err
	case <-db.stopped: // closed after the committer exits: r was never taken
		return fmt.Errorf("create task: %w: store closed", controlplane.ErrUnavailable)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// committer is the single goroutine that writes submitted tasks.
func (db *DB) committer() {
	defer close(db.stopped)
	batch := make([]*createReq, 0, maxCreateBatch)
	for {
		select {
		case r := <-db.creates:
			batch = append(batch[:0], r)
		fill:
			for len(batch) < maxCreateBatch {
				select {
				case r := <-db.creates:
					batch = append(batch, r)
				default:
					break fill
				}
			}
			db.commitCreates(batch)
		case <-db.closed:
			return
		}
	}
}

func (db *DB) commitCreates(batch []*createReq) {
	live := batch[:0:0]
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.done <- err // the caller gave up before its task was written
			continue
		}
		live = append(live, r)
	}
	if len(live) == 0 {
		return
	}
	now := db.now()
	// The batch is not bound to any one caller's context: a caller that
	// gives up must not roll back its neighbours.
	err := db.write(context.Background(), func(tx *sql.Tx) error { return insertTasks(tx, live, now) })
	if err == nil {
		for _, r := range live {
			r.done <- nil
		}
		return
	}
	if len(live) == 1 {
		live[0].done <- err
		return
	}
	for _, r := range live {
		r.done <- db.write(r.ctx, func(tx *sql.Tx) error { return insertTasks(tx, []*createReq{r}, now) })
	}
}

const insertTaskSQL = `INSERT INTO tasks (name, command, image, args, env, device_count, memory_mib,
	compute_percent, vendor, models, qos, priority, timeout_seconds, max_retries, labels, tenant, project,
	cpu_milli, host_memory_mib, rdma, gang, gang_size, state, owner_id, owner, attempt, reason, created_at,
	updated_at)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'submitted', ?,
	COALESCE(NULLIF(?, ''), (SELECT username FROM users WHERE id = ?), ''), 0, ?, ?, ?)
	RETURNING id, owner`

const insertFirstEventSQL = `INSERT INTO task_events (task_id, from_state, to_state, reason, actor, at)
	VALUES (?, '', 'submitted', ?, ?, ?)`

// insertTasks writes each task and its submitted event with statements
// prepared once per transaction.
func insertTasks(tx *sql.Tx, reqs []*createReq, now time.Time) error {
	ctx := context.Background()
	insTask, err := tx.PrepareContext(ctx, insertTaskSQL)
	if err != nil {
		return fmt.Errorf("create task: %w", mapErr(err))
	}
	defer insTask.Close()
	insEvent, err := tx.PrepareContext(ctx, insertFirstEventSQL)
	if err != nil {
		return fmt.Errorf("create task: %w", mapErr(err))
	}
	defer insEvent.Close()
	for _, r := range reqs {
		t, s, js := r.t, &r.t.Spec, r.js
		var id int64
		var owner string
		err := insTask.QueryRowContext(ctx, s.Name, js.Command, s.Image, js.Args, js.Env, s.DeviceCount,
			s.MemoryMiB, s.ComputePercent, s.Vendor, js.Models, s.QoS, s.Priority, s.TimeoutSeconds,
			s.MaxRetries, js.Labels, s.Tenant, s.Project, s.CPUMilli, s.HostMemoryMiB, s.RDMA, s.Gang,
			s.GangSize, nullID(t.OwnerID), t.Owner, t.OwnerID, t.Reason, ts(now), ts(now)).Scan(&id, &owner)
		if isForeignKey(err) {
			return fmt.Errorf("task owner %d: %w", t.OwnerID, controlplane.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("create task: %w", mapErr(err))
		}
		if _, err := insEvent.ExecContext(ctx, id, t.Reason, storeutil.FirstEventActor(owner), ts(now)); err != nil {
			return fmt.Errorf("create task event: %w", mapErr(err))
		}
		t.ID, t.Owner, t.State, t.Attempt = id, owner, controlplane.TaskSubmitted, 0
		t.NodeID, t.ExitCode, t.StartedAt, t.FinishedAt = "", nil, nil, nil
		t.CreatedAt, t.UpdatedAt = now, now
	}
	return nil
}
