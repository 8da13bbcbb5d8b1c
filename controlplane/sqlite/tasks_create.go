package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// Task submission uses group commit (storeutil.GroupCommit). All writes are
// serialised on one connection anyway, and most of a commit's cost is
// writing the same B-tree pages (task table, its indexes, the event table) to
// the WAL; so one worker takes every CreateTask waiting at that moment (up to
// maxCreateBatch) and inserts them in a single transaction. A failed batch is
// retried one task per transaction, so one bad task cannot fail its
// neighbours.
const maxCreateBatch = 256

// createWorkers is one: there is a single writer connection to feed.
const createWorkers = 1

// CreateTask validates t.Spec, stores t in TaskSubmitted together with its
// first event in one transaction, and sets ID, State, Owner and timestamps.
// A non-empty t.Owner is kept; otherwise the owner's username is looked up.
func (db *DB) CreateTask(ctx context.Context, t *controlplane.Task) error {
	n, err := storeutil.PrepareTask(t)
	if err != nil {
		return err
	}
	if err := db.creates.Do(ctx, n); err != nil {
		return fmt.Errorf("create task: %w", err)
	}
	return nil
}

const insertTaskSQL = `INSERT INTO tasks (name, command, image, args, env, device_count, memory_mib,
	compute_percent, vendor, models, qos, priority, timeout_seconds, max_retries, labels, tenant, project,
	cpu_milli, host_memory_mib, rdma, gang, gang_size, state, owner_id, owner, attempt, reason, created_at,
	updated_at, secret_env, allow_best_effort, submit_key, submit_hash)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'submitted', ?,
	COALESCE(NULLIF(?, ''), (SELECT username FROM users WHERE id = ?), ''), 0, ?, ?, ?, ?, ?, ?, ?)
	RETURNING id, owner`

const insertFirstEventSQL = `INSERT INTO task_events (task_id, from_state, to_state, reason, actor, at)
	VALUES (?, '', 'submitted', ?, ?, ?)`

// insertTasks writes every task and its submitted event in one transaction
// (the GroupCommit write function), with statements prepared once per
// transaction. The callers' tasks are updated only after the commit.
func (db *DB) insertTasks(ctx context.Context, batch []storeutil.NewTask) error {
	now := db.now()
	ids := make([]int64, len(batch))
	owners := make([]string, len(batch))
	err := db.write(ctx, func(tx *sql.Tx) error {
		insTask, err := tx.PrepareContext(ctx, insertTaskSQL)
		if err != nil {
			return mapErr(err)
		}
		defer insTask.Close()
		insEvent, err := tx.PrepareContext(ctx, insertFirstEventSQL)
		if err != nil {
			return mapErr(err)
		}
		defer insEvent.Close()
		for i, n := range batch {
			t := n.Task
			err := insTask.QueryRowContext(ctx, taskInsertArgs(n, now)...).Scan(&ids[i], &owners[i])
			if isForeignKey(err) {
				return fmt.Errorf("task owner %d: %w", t.OwnerID, controlplane.ErrNotFound)
			}
			if err != nil {
				return mapErr(err)
			}
			if _, err := insEvent.ExecContext(ctx, ids[i], t.Reason, storeutil.FirstEventActor(owners[i]),
				ts(now)); err != nil {
				return fmt.Errorf("task event: %w", mapErr(err))
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i, n := range batch {
		n.Submitted(ids[i], owners[i], now)
	}
	return nil
}

// taskInsertArgs are insertTaskSQL's arguments for n.
func taskInsertArgs(n storeutil.NewTask, now time.Time) []any {
	t, s, js := n.Task, &n.Task.Spec, n.JSON
	return []any{s.Name, js.Command, s.Image, js.Args, js.Env, s.DeviceCount,
		s.MemoryMiB, s.ComputePercent, s.Vendor, js.Models, s.QoS, s.Priority, s.TimeoutSeconds,
		s.MaxRetries, js.Labels, s.Tenant, s.Project, s.CPUMilli, s.HostMemoryMiB, s.RDMA, s.Gang,
		s.GangSize, nullID(t.OwnerID), t.Owner, t.OwnerID, t.Reason, ts(now), ts(now), js.SecretEnv,
		s.AllowBestEffort, submitKey(t), submitHash(t)}
}

// submitKey and submitHash are the task's idempotency key columns (NULL
// for a submission without one).
func submitKey(t *controlplane.Task) *string {
	if t.SubmitKey == nil {
		return nil
	}
	return &t.SubmitKey.Key
}

func submitHash(t *controlplane.Task) *string {
	if t.SubmitKey == nil {
		return nil
	}
	return &t.SubmitKey.Hash
}
